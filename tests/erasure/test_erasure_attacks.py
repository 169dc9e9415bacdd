"""Who could erase, read or widen an erasure they should not: each is refused, and nothing is removed."""

import pytest
from django.utils import timezone

from memory_core.models import Memory
from proposals.models import Proposal
from tenancy.models import Delegation
from tests.erasure.conftest import ask
from tests.erasure.test_erasure import _approve_all
from tests.factories import apply_released, approve, make_agent, make_person


@pytest.mark.django_db
def test_an_agent_without_a_grant_for_the_subject_cannot_ask(agent, api, about, subject):
    about(1)
    stranger = make_agent(agent.tenant.name, "same-tenant-stranger", acts_for=())
    response = ask(stranger.client, subject)
    assert response.status_code == 403, response.content
    assert response.json()["code"] == "erasure_not_allowed"
    assert not Proposal.objects.filter(action="erase").exists()


@pytest.mark.django_db
def test_a_plan_sent_by_the_client_is_refused_not_used(api, about, subject):
    about(1)
    body = {"subject": subject, "reason": "r", "members": [{"memory_id": "0" * 32, "revision": 1}]}
    response = api.post("/api/v1/erasures/", body, format="json", HTTP_IDEMPOTENCY_KEY="erase-lying-plan")
    assert response.status_code == 400 and "members" in response.json()["errors"], response.content
    assert not Proposal.objects.filter(action="erase").exists()


@pytest.mark.django_db
def test_a_client_cannot_claim_to_be_an_operator_who_asked(api, about, subject):
    about(1)
    body = {"subject": subject, "reason": "r", "requested_by": 1}
    response = api.post(
        "/api/v1/erasures/", body, format="json", HTTP_IDEMPOTENCY_KEY="erase-claims-operator"
    )
    assert response.status_code == 400 and "requested_by" in response.json()["errors"], response.content
    assert not Proposal.objects.filter(action="erase").exists()


@pytest.mark.django_db
def test_the_plain_proposals_endpoint_does_not_take_an_erasure(api, applied_memory):
    body = {"action": "erase", "memory_id": str(applied_memory.id), "base_revision": 1, "reason": "r"}
    response = api.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY="erase-plain")
    assert response.status_code == 400 and "action" in response.json()["errors"], response.content


@pytest.mark.django_db
def test_another_agent_of_the_tenant_or_another_tenant_cannot_read_an_erasure(
    agent, api, about, subject, other_agent
):
    about(1)
    erasure_id = ask(api, subject).json()["erasure_id"]
    colleague = make_agent(agent.tenant.name, "colleague-agent", acts_for=())
    for client in (colleague.client, other_agent.client):
        for path in (f"/api/v1/erasures/{erasure_id}/", f"/api/v1/erasures/{erasure_id}/certificate"):
            response = client.get(path)
            assert response.status_code == 404, (path, response.content)
    # The plain proposals API shows it to a colleague as a restricted memory about the subject: metadata only.
    shown = colleague.client.get(f"/api/v1/proposals/{erasure_id}/").json()
    assert shown["view"] == "metadata_only" and "erasure" not in shown["fields"]
    assert subject["id"] not in str(shown["fields"])


@pytest.mark.django_db
def test_the_requester_cannot_approve_and_another_tenants_reviewer_cannot_count(
    agent, api, about, subject, other_agent
):
    memories = about(1)
    erasure = Proposal.objects.get(pk=ask(api, subject).json()["erasure_id"])
    outsider = make_person("outside-reviewer", other_agent.tenant)
    with pytest.raises(Exception):  # noqa: B017  (the service refuses a reviewer of another tenant)
        approve(outsider, erasure)
    approve(make_person("only-one", agent.tenant), erasure)
    erasure.refresh_from_db()
    assert erasure.status == "pending_review"  # one of two approvals
    assert Memory.objects.filter(pk=memories[0].pk).exists()


@pytest.mark.django_db(transaction=True)
def test_a_grant_revoked_before_execution_stops_the_erasure(agent, api, about, subject, reviewers):
    memories = about(2)
    erasure_id = ask(api, subject).json()["erasure_id"]
    Delegation.objects.filter(agent=agent.agent, subject_id=subject["id"]).update(revoked_at=timezone.now())

    receipt = _approve_all(erasure_id, reviewers)

    assert receipt.outcome == "stale" and "grant" in receipt.reason
    assert Memory.objects.filter(pk__in=[m.pk for m in memories]).count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_memory_about_the_subject_added_after_the_plan_makes_it_stale(
    agent, api, about, subject, reviewers
):
    about(1)
    erasure_id = ask(api, subject).json()["erasure_id"]
    late = about(1)[0]

    receipt = _approve_all(erasure_id, reviewers)

    assert receipt.outcome == "stale" and str(late.pk) in receipt.reason
    assert Memory.objects.filter(subject_id=subject["id"]).count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_changed_plan_is_not_what_reviewers_approved(agent, api, about, subject, reviewers):
    memories = about(2)
    erasure = Proposal.objects.get(pk=ask(api, subject).json()["erasure_id"])
    for person in reviewers:
        approve(person, erasure)
    # The web role can write proposal rows: a plan rewritten after approval is no longer the one decided.
    fields = {**erasure.fields, "members": erasure.fields["members"][:1]}
    Proposal.objects.filter(pk=erasure.pk).update(fields=fields)

    receipt = apply_released(erasure)

    assert receipt.outcome == "digest_mismatch"
    assert Memory.objects.filter(pk__in=[m.pk for m in memories]).count() == 2
