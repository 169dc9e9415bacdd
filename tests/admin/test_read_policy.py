"""The admin shows memory content only as the read policy shows a person (own_subject false, internal)."""

import uuid

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from memory_core.models import Memory
from proposals.models import Proposal
from tests.factories import apply_released, approve, make_evidence, make_person, submit


@pytest.fixture
def reviewer_client(client, agent):
    person = make_person("admin-reviewer", agent.tenant)
    person.is_staff = True
    person.save(update_fields=["is_staff"])
    person.groups.add(Group.objects.get(name="auditors"))
    client.force_login(person)
    return client


def _pages(memory) -> list[str]:
    """Every admin page that shows this memory or the proposal that made it, with their revisions."""
    proposal = Proposal.objects.get(target_id=memory.pk, action="create")
    pages = []
    for obj, name in ((memory, "memory_core_memory"), (proposal, "proposals_proposal")):
        pages += [
            reverse(f"admin:{name}_change", args=[obj.pk]),
            reverse(f"admin:{name}_history", args=[obj.pk]),
        ]
        pages += [
            reverse(f"admin:{name}_simple_history", args=[obj.pk, row.history_id])
            for row in obj.history.all()
        ]
    return pages


def _shown(client, memory) -> str:
    html = ""
    for url in _pages(memory):
        response = client.get(url)
        assert response.status_code == 200, url
        html += response.content.decode()
    return html


def test_a_restricted_memory_shows_no_content_in_the_admin(reviewer_client, remember, marker):
    memory = remember(f"{marker} restricted", sensitivity="restricted", dedupe_key=f"{marker}-key")
    html = _shown(reviewer_client, memory)
    assert marker not in html
    withheld = '<span title="metadata_only">details withheld, metadata only</span>'
    assert f"Content: {withheld} (read rule read-restricted)" in html


def test_superusers_get_the_read_policy_too(admin_client, remember, marker):
    memory = remember(f"{marker} restricted", sensitivity="restricted")
    assert marker not in _shown(admin_client, memory)


def test_a_confidential_memory_is_masked(reviewer_client, remember, marker):
    memory = remember(f"{marker} confidential", sensitivity="confidential")
    html = _shown(reviewer_client, memory)
    assert marker not in html
    assert "***" in html and "read-confidential" in html


def test_an_internal_memory_is_shown_raw(reviewer_client, remember, marker):
    memory = remember(f"{marker} internal")
    html = reviewer_client.get(reverse("admin:memory_core_memory_change", args=[memory.pk])).content.decode()
    assert marker in html and "read-default" in html


def _update(agent, memory, changes: dict) -> None:
    """Change a memory through proposal, approvals and the executor."""
    payload = {
        "action": "update",
        "memory_id": str(memory.pk),
        "base_revision": Memory.objects.get(pk=memory.pk).revision,
        "changes": changes,
        "evidence": [make_evidence(agent.agent).binding()],
        "policy_context": {"risk_level": "low"},
        "rationale": "revised",
    }
    update = submit(agent.agent, payload)
    for index in range(update.required_approvals):
        approve(make_person(f"approver-{uuid.uuid4().hex[:6]}-{index}", agent.tenant), update)
    assert apply_released(update).outcome == "applied"


def test_the_list_of_changes_never_shows_restricted_content(reviewer_client, agent, remember, marker):
    memory = remember(f"{marker} before", sensitivity="restricted")
    _update(agent, memory, {"content": {"statement": f"{marker} after"}})
    html = reviewer_client.get(reverse("admin:memory_core_memory_history", args=[memory.pk])).content.decode()
    assert memory.history.count() == 2
    assert marker not in html


def test_a_revision_page_follows_the_memory_as_it_is_now(reviewer_client, agent, remember, marker):
    """A revision written as internal is withheld once the memory is restricted (the stricter view wins)."""
    memory = remember(f"{marker} internal")
    _update(agent, memory, {"sensitivity": "restricted"})
    first = memory.history.get(revision=1)
    url = reverse("admin:memory_core_memory_simple_history", args=[memory.pk, first.history_id])
    assert marker not in reviewer_client.get(url).content.decode()


def test_a_revision_page_cannot_revert(admin_client, agent, factor_proposal_rejected):
    proposal = factor_proposal_rejected
    first = proposal.history.earliest("history_date")
    url = reverse("admin:proposals_proposal_simple_history", args=[proposal.pk, first.history_id])
    response = admin_client.post(url, {"status": "pending_review", "_save": "Save"})
    assert response.status_code == 403
    assert Proposal.objects.get(pk=proposal.pk).status == Proposal.Status.REJECTED


@pytest.fixture
def factor_proposal_rejected(agent):
    from reviews.services import record_decision
    from tests.factories import create_payload, factor_fact, make_evidence, submit

    proposal = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    record_decision(
        actor=make_person("vetoer", agent.tenant),
        proposal_id=proposal.pk,
        decision="reject",
        reason="no",
        represented_owner="",
        action_digest=proposal.action_digest,
        channel="api",
    )
    return Proposal.objects.get(pk=proposal.pk)
