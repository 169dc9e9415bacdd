"""One memory's timeline: every revision with its receipt, decisions and evidence, until it is purged."""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from executor.models import Receipt
from provenance.services import invalidate_evidence_revision
from tests.admin.conftest import ORG_FACT
from tests.admin.test_read_policy import _update
from tests.factories import approve, make_evidence, make_person
from tests.lifecycle.test_lifecycle_verbs import drive_existing, propose


def _timeline_url(memory_id) -> str:
    return reverse("admin:executor_receipt_timeline", args=[memory_id])


def _timeline(client, memory_id) -> str:
    response = client.get(_timeline_url(memory_id))
    assert response.status_code == 200
    return response.content.decode()


def _staff_client(client, username, tenant, *, group="auditors", perm="tenancy.audit_tenant"):
    person = make_person(username, tenant, perm)
    person.is_staff = True
    person.save(update_fields=["is_staff"])
    if group:
        person.groups.add(Group.objects.get(name=group))
    client.force_login(person)
    return client


def test_an_auditor_of_another_tenant_finds_no_timeline(client, other_agent, remember, marker):
    memory = remember(f"{marker} secret")
    _staff_client(client, "b-auditor", other_agent.tenant)
    response = client.get(_timeline_url(memory.pk))
    assert response.status_code == 404
    assert marker not in response.content.decode()


def test_staff_without_view_permission_on_receipts_is_refused(client, agent, remember, marker):
    memory = remember(f"{marker} secret")
    _staff_client(client, "no-perm", agent.tenant, group="")
    response = client.get(_timeline_url(memory.pk))
    assert response.status_code == 403
    assert marker not in response.content.decode()


def test_a_person_who_is_not_staff_is_sent_to_log_in(client, agent, remember, marker):
    memory = remember(f"{marker} secret")
    client.force_login(make_person("outsider", agent.tenant, "tenancy.audit_tenant"))
    response = client.get(_timeline_url(memory.pk))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_timeline_is_read_only(auditor_client, remember, marker):
    memory = remember(f"{marker} one")
    assert auditor_client.post(_timeline_url(memory.pk)).status_code == 405


def test_every_revision_is_shown_with_its_receipt_decisions_and_evidence(
    auditor_client, agent, remember, marker
):
    memory = remember(f"{marker} first", **ORG_FACT)
    _update(agent, memory, {"content": {"statement": f"{marker} second"}})
    page = _timeline(auditor_client, memory.pk)
    for receipt in Receipt.objects.filter(memory_id=memory.pk):
        assert reverse("admin:executor_receipt_change", args=[receipt.pk]) in page
        for item in receipt.evidence:
            assert str(item["evidence_id"])[:6] in page
    assert f"“{marker} first”" in page and f"“{marker} second”" in page
    assert "rev-a for user:pm-alice: approve · “ok” · api" in page
    assert "now at revision 2, active" in page
    assert "created at revision 1" in page and "none → 1" not in page


def test_restricted_content_never_reaches_the_timeline(auditor_client, agent, remember, marker):
    memory = remember(f"{marker} first", sensitivity="restricted")
    _update(agent, memory, {"content": {"statement": f"{marker} second"}})
    page = _timeline(auditor_client, memory.pk)
    assert marker not in page
    assert 'Revision: <span title="metadata_only">details withheld, metadata only</span>' in page


def test_a_revision_resting_on_invalidated_evidence_shows_a_fence(auditor_client, agent, remember, marker):
    evidence = make_evidence(agent.agent)
    memory = remember(f"{marker}", evidence=evidence)
    invalidate_evidence_revision(revision=evidence, reason="look-ahead bug")
    page = _timeline(auditor_client, memory.pk)
    assert "invalidated (look-ahead bug)" in page
    assert "<strong>fence</strong>" in page and "<strong>fenced</strong>" in page


def test_after_a_purge_only_what_happened_when_and_by_whom_is_shown(auditor_client, agent, remember, marker):
    memory = remember(f"{marker} to forget", **ORG_FACT)
    reviewers = [make_person("purger-1", agent.tenant), make_person("purger-2", agent.tenant)]
    for verb in ("delete", "purge"):
        proposal = propose(agent, memory, verb, reason=f"{marker} reason")
        if verb == "purge":
            for person in reviewers[: proposal.required_approvals]:
                approve(person, proposal, reason=f"{marker} approving")
            receipt = drive_existing(proposal, [])
        else:
            receipt = drive_existing(proposal, reviewers)
        assert receipt.outcome == "applied"
    page = _timeline(auditor_client, memory.pk)
    assert marker not in page
    assert "<strong>purged</strong> on" in page and "decided by purger-1" in page
    assert page.count('href="/admin/executor/receipt/') >= 3  # every receipt still linked


def test_list_rows_and_the_receipt_page_link_to_the_timeline(auditor_client, remember, marker):
    memory = remember(f"{marker}")
    receipt = Receipt.objects.get(memory_id=memory.pk)
    listing = auditor_client.get(reverse("admin:executor_receipt_changelist")).content.decode()
    story = auditor_client.get(reverse("admin:executor_receipt_change", args=[receipt.pk])).content.decode()
    assert _timeline_url(memory.pk) in listing and _timeline_url(memory.pk) in story


@pytest.mark.parametrize("revisions", [1, 6])
def test_the_timeline_costs_the_same_queries_however_long_the_life(
    auditor_client, agent, remember, marker, revisions, django_assert_max_num_queries
):
    memory = remember(f"{marker} 0", **ORG_FACT)
    for n in range(1, revisions):
        _update(agent, memory, {"content": {"statement": f"{marker} {n}"}})
    with django_assert_max_num_queries(12):
        page = _timeline(auditor_client, memory.pk)
    assert f"{marker} {revisions - 1}" in page


def test_the_timeline_is_titled_by_subject_and_type_with_the_id_beneath(auditor_client, remember, marker):
    memory = remember(f"{marker}", sensitivity="restricted")
    page = _timeline(auditor_client, memory.pk)
    assert "<h1>user:pm-alice · preference</h1>" in page  # metadata, shown in every view
    assert f'<p class="quiet memory-id">Timeline of memory <code>{memory.pk}</code></p>' in page
    assert marker not in page


def test_a_purged_memory_s_timeline_names_no_subject(auditor_client, agent, remember, marker):
    memory = remember(f"{marker} to forget", **ORG_FACT)
    reviewers = [make_person("purger-1", agent.tenant), make_person("purger-2", agent.tenant)]
    drive_existing(propose(agent, memory, "delete"), reviewers)
    purge = propose(agent, memory, "purge")
    for person in reviewers[: purge.required_approvals]:
        approve(person, purge)
    assert drive_existing(purge, []).outcome == "applied"
    page = _timeline(auditor_client, memory.pk)
    assert "<h1>purged memory · semantic fact</h1>" in page
    assert "org:quant-desk" not in page
