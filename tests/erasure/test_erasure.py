"""Erasing a subject: one reviewed plan, a receipt per memory, a certificate, and nothing left behind."""

import io

import pytest
from django.core.management import call_command

from executor.models import Receipt, TenantExport
from executor.offline import verify_export
from executor.transfer import export_tenant
from memory_core.models import Memory
from proposals.models import Proposal
from tests.database_scan import columns_holding
from tests.erasure.conftest import ask
from tests.factories import apply_released, approve, create_payload, make_evidence, submit

# Records of authority that named the person: kept, but by pseudonym (listed by table and row id).
AUTHORITY = {"tenancy_delegation", "tenancy_historicaldelegation"}


def _approve_all(erasure_id, reviewers):
    proposal = Proposal.objects.get(pk=erasure_id)
    for person in reviewers[: proposal.required_approvals]:
        approve(person, proposal)
    return apply_released(proposal)


@pytest.mark.django_db(transaction=True)
def test_an_erasure_is_planned_by_the_server_and_removes_nothing_before_review(agent, api, about, subject):
    memories = about(3)
    response = ask(api, subject)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "pending_review" and body["required_approvals"] == 2
    assert body["matched_rule"] == "review-erasure"
    assert {m["memory_id"] for m in body["plan"]["members"]} == {str(m.id) for m in memories}
    assert all(m["because"] == "subject" and m["content_hash"] for m in body["plan"]["members"])
    assert Memory.objects.filter(subject_id=subject["id"]).count() == 3


@pytest.mark.django_db(transaction=True)
def test_a_reviewed_erasure_leaves_nothing_of_the_subject_and_certifies_it(
    agent, api, about, remember, subject, reviewers, marker
):
    memories = about(3)
    kept = remember("alice likes tea in the afternoon")  # another person's memory stays
    pending = submit(  # an open proposal about the subject is withdrawn and scrubbed
        agent.agent,
        create_payload(
            {
                "subject": subject,
                "scope": "user",
                "type": "preference",
                "content": {"statement": f"{marker} also likes walks"},
                "sensitivity": "internal",
            },
            [make_evidence(agent.agent)],
            {"acting_for_subject": subject, "risk_level": "high"},
        ),
    )
    assert pending.status == "pending_review"
    searched = api.post(
        "/api/v1/recall/search",
        {"query": f"{marker} {subject['id']}", "policy_context": {"acting_for_subject": subject}},
        format="json",
    )
    assert searched.status_code == 200 and searched.json()["results"]
    export_tenant(agent.tenant, io.StringIO())
    assert columns_holding(marker) and columns_holding(subject["id"])

    erasure_id = ask(api, subject).json()["erasure_id"]
    receipt = _approve_all(erasure_id, reviewers)

    assert receipt.outcome == "applied", receipt.reason
    body = api.get(f"/api/v1/erasures/{erasure_id}/").json()
    assert body["status"] == "applied"
    certificate = body["certificate"]
    assert {item["memory_id"] for item in certificate["removed"]} == {str(m.id) for m in memories}
    assert certificate["withdrawn"] == [str(pending.pk)]
    assert certificate["scan"]["found"] == {} and certificate["clean"] is True
    assert certificate["scan"]["retained"] == {}
    assert {rewritten["table"] for rewritten in certificate["pseudonymised"]} == AUTHORITY
    assert [e["export_id"] for e in certificate["exports"]] == [str(TenantExport.objects.get().pk)]
    assert certificate["subject"]["kind"] == "user" and subject["id"] not in str(body)
    # One receipt per purged memory, then the certificate, in chain order.
    receipts = list(Receipt.objects.filter(proposal_id=erasure_id).order_by("seq"))
    assert [r.memory_id for r in receipts[:-1]] == sorted((m.id for m in memories), key=str)
    assert [r.seq for r in receipts] == list(range(receipts[0].seq, receipts[0].seq + 4))
    assert body["receipts"] == [str(r.pk) for r in receipts]

    assert columns_holding(marker) == {}
    assert columns_holding(subject["id"]) == {}
    assert Memory.objects.filter(pk=kept.pk, content=kept.content).exists()
    assert Proposal.objects.get(pk=pending.pk).status == "withdrawn"
    call_command("verify_receipts")

    certificate_file = api.get(f"/api/v1/erasures/{erasure_id}/certificate")
    assert certificate_file.status_code == 200
    lines = b"".join(certificate_file.streaming_content).decode().splitlines()
    proof = verify_export(lines)
    assert proof.receipts == 4


@pytest.mark.django_db(transaction=True)
def test_recall_finds_nothing_about_an_erased_subject_and_nobody_acts_for_them(
    agent, api, about, subject, reviewers, marker
):
    about(2)
    erasure_id = ask(api, subject).json()["erasure_id"]
    assert _approve_all(erasure_id, reviewers).outcome == "applied"

    found = api.post(
        "/api/v1/recall/search", {"query": marker, "filters": {"subject": subject}}, format="json"
    )
    acting = api.post(
        "/api/v1/recall/search",
        {"query": marker, "policy_context": {"acting_for_subject": subject}},
        format="json",
    )
    assert found.status_code == 200 and found.json()["results"] == []
    assert (acting.status_code, acting.json()["code"]) == (403, "acting_for_not_granted")  # grant revoked


@pytest.mark.django_db
def test_a_reviewer_reads_the_plan_as_one_list_and_decides_it_in_the_review_pages(
    agent, api, about, subject, reviewers, client
):
    memories = about(2)
    erasure_id = ask(api, subject).json()["erasure_id"]
    client.force_login(reviewers[0])

    html = client.get(f"/review/proposals/{erasure_id}/").content.decode()

    assert f"Erase user:{subject['id']}: purge 2 memories about them" in html
    assert all(str(memory.pk) in html for memory in memories)
    queue = client.get("/review/").content.decode()
    assert erasure_id in queue


@pytest.mark.django_db
def test_an_operator_asks_in_the_admin_and_cannot_approve_their_own_ask(agent, about, subject, client):
    from guardian.shortcuts import assign_perm

    from tests.factories import make_person

    memories = about(2)
    operator = make_person("erasure-operator", agent.tenant)
    operator.is_staff = True
    operator.save()
    assign_perm("tenancy.erase_subject", operator, agent.tenant)
    client.force_login(operator)
    form = {
        "tenant": agent.tenant.pk,
        "subject_kind": "user",
        "subject_id": subject["id"],
        "reason": "GDPR art. 17",
    }

    response = client.post("/admin/erasure/erasure/add/", form)

    erasure = Proposal.objects.get(action="erase")
    assert response.status_code == 302 and str(erasure.pk) in response["Location"]
    assert erasure.fields["requested_by"] == operator.pk and erasure.submitted_by.is_system
    assert {m["memory_id"] for m in erasure.fields["members"]} == {str(m.pk) for m in memories}
    approve(operator, erasure)
    approve(make_person("second-reviewer", agent.tenant), erasure)
    receipt = apply_released(erasure)
    assert receipt.outcome == "unauthorised_release"  # one counted approval of two: the asker's is not
    assert Memory.objects.filter(pk__in=[m.pk for m in memories]).count() == 2


@pytest.mark.django_db
def test_an_operator_without_the_permission_is_not_offered_the_page(agent, subject, client):
    from tests.factories import make_person

    person = make_person("plain-reviewer", agent.tenant)
    person.is_staff = True
    person.save()
    client.force_login(person)
    form = {"tenant": agent.tenant.pk, "subject_kind": "user", "subject_id": subject["id"], "reason": "r"}
    client.post("/admin/erasure/erasure/add/", form)
    assert not Proposal.objects.filter(action="erase").exists()


@pytest.mark.django_db(transaction=True)
def test_an_auditor_reads_the_erasure_in_the_receipts_and_timelines_without_its_content(
    agent, api, about, subject, reviewers, marker, client
):
    from django.contrib.auth.models import Group
    from django.urls import reverse

    from tests.factories import make_person

    memories = about(2)
    erasure_id = ask(api, subject).json()["erasure_id"]
    assert _approve_all(erasure_id, reviewers).outcome == "applied"
    auditor = make_person("erasure-auditor", agent.tenant, "tenancy.audit_tenant")
    auditor.is_staff = True
    auditor.save(update_fields=["is_staff"])
    auditor.groups.add(Group.objects.get(name="auditors"))
    client.force_login(auditor)

    listing = client.get("/admin/executor/receipt/")
    timeline = client.get(reverse("admin:executor_receipt_timeline", args=[memories[0].pk]))

    assert listing.status_code == 200 and timeline.status_code == 200
    assert "subject erased" in listing.content.decode()
    assert "purged memory" in timeline.content.decode()  # the timeline knows the memory went
    for page in (listing.content.decode(), timeline.content.decode()):
        assert marker not in page and subject["id"] not in page


@pytest.mark.django_db(transaction=True)
def test_erasing_a_subject_with_nothing_stored_certifies_that_nothing_is_there(api, subject, reviewers):
    body = ask(api, subject).json()
    assert body["plan"]["members"] == []
    assert _approve_all(body["erasure_id"], reviewers).outcome == "applied"
    certificate = api.get(f"/api/v1/erasures/{body['erasure_id']}/").json()["certificate"]
    assert certificate["removed"] == [] and certificate["clean"] is True


@pytest.mark.django_db
def test_asking_again_with_the_same_key_answers_the_same_erasure(api, about, subject):
    about(1)
    first = ask(api, subject, key="erase-once")
    again = ask(api, subject, key="erase-once")
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json()["erasure_id"] == first.json()["erasure_id"]
    assert Proposal.objects.filter(action="erase").count() == 1
