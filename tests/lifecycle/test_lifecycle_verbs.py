"""expire, revoke, delete, restore and purge: proposals, the state machine, and what each leaves behind."""

import uuid

import pytest
from django.core.management import call_command

from executor.models import Receipt
from memory_core.lifecycle import TRANSITIONS, InvalidTransition
from memory_core.models import Memory, MemoryVector
from proposals.models import Proposal
from tenancy.services import grant_delegation
from tests.database_scan import tables_holding
from tests.factories import (
    apply_released,
    approve,
    create_payload,
    make_evidence,
    make_person,
    owner_context,
    submit,
    user_preference,
)

STATES = ["active", "expired", "revoked", "deleted"]
VERBS = ["expire", "revoke", "delete", "purge", "restore"]
PATH_TO = {"active": [], "expired": ["expire"], "revoked": ["revoke"], "deleted": ["delete"]}


@pytest.fixture
def reviewers(agent):
    return [make_person("r1", agent.tenant), make_person("r2", agent.tenant)]


def propose(agent, memory, verb, reason="no longer true", context=None):
    memory.refresh_from_db()
    return submit(
        agent.agent,
        {
            "action": verb,
            "memory_id": str(memory.id),
            "base_revision": memory.revision,
            "reason": reason,
            "policy_context": context or owner_context(),
        },
    )


def drive(agent, memory, verb, reviewers) -> Receipt:
    """Submit a verb, approve it as policy requires, and run the executor on it."""
    return drive_existing(propose(agent, memory, verb), reviewers)


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("verb", VERBS)
def test_state_machine_allows_exactly_its_transitions(agent, applied_memory, reviewers, state, verb):
    for step in PATH_TO[state]:
        assert drive(agent, applied_memory, step, reviewers).outcome == "applied"
    applied_memory.refresh_from_db()
    assert applied_memory.state == state
    if (state, verb) in TRANSITIONS:
        assert propose(agent, applied_memory, verb).status != Proposal.Status.DENIED
    else:
        with pytest.raises(InvalidTransition):
            propose(agent, applied_memory, verb)


def test_owner_expires_their_own_preference_automatically(agent, applied_memory, reviewers):
    receipt = drive(agent, applied_memory, "expire", [])
    applied_memory.refresh_from_db()
    assert receipt.outcome == "applied"
    assert (applied_memory.state, applied_memory.revision, applied_memory.state_reason) == (
        "expired",
        2,
        "no longer true",
    )


def test_restore_needs_review_and_returns_to_active(agent, applied_memory, reviewers):
    drive(agent, applied_memory, "revoke", [])
    proposal = propose(agent, applied_memory, "restore")
    assert proposal.matched_rule == "review-lifecycle"
    assert drive_existing(proposal, reviewers).outcome == "applied"
    applied_memory.refresh_from_db()
    assert (applied_memory.state, applied_memory.state_reason) == ("active", "")


def drive_existing(proposal, reviewers) -> Receipt:
    """Approve an existing proposal as policy requires and run the executor on it."""
    for reviewer in reviewers[: proposal.required_approvals]:
        approve(reviewer, proposal)
    return apply_released(proposal)


def test_purge_needs_two_approvals(agent, applied_memory, reviewers):
    drive(agent, applied_memory, "delete", [])
    proposal = propose(agent, applied_memory, "purge")
    assert (proposal.matched_rule, proposal.required_approvals) == ("review-purge", 2)


def test_revoked_memory_is_never_updated(agent, api, applied_memory):
    drive(agent, applied_memory, "revoke", [])
    applied_memory.refresh_from_db()
    payload = {
        "action": "update",
        "memory_id": str(applied_memory.id),
        "base_revision": applied_memory.revision,
        "changes": {"confidence": 0.9},
        "evidence": [make_evidence(agent.agent).binding()],
    }
    response = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="u")
    assert (response.status_code, response.json()["code"]) == (422, "target_not_active")


def test_invalid_transition_is_a_409_problem_and_stores_nothing(agent, api, applied_memory):
    before = Proposal.objects.count()
    body = {"action": "restore", "memory_id": str(applied_memory.id), "base_revision": 1, "reason": "back"}
    response = api.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY="r")
    assert (response.status_code, response.json()["code"]) == (409, "invalid_transition")
    assert Proposal.objects.count() == before


def test_two_verbs_on_one_base_revision_apply_once(agent, applied_memory):
    first, second = propose(agent, applied_memory, "expire"), propose(agent, applied_memory, "delete")
    assert apply_released(first).outcome == "applied"
    assert apply_released(second).outcome == "stale"
    applied_memory.refresh_from_db()
    assert applied_memory.state == "expired"


def test_purge_leaves_no_content_anywhere_in_the_database(agent, api, reviewers, settings):
    settings.CUSTODIAN_EMBEDDER = "hashing"  # so every revision has a vector to purge too
    marker, subject_id, dedupe_key = (f"{kind}{uuid.uuid4().hex}" for kind in ("zq", "subj", "dedupe"))
    subject = {"kind": "user", "id": subject_id}
    grant_delegation(agent=agent.agent, subject=subject)
    context = owner_context(subject)
    content = {"statement": f"Alice's secret preference {marker}", "preference_key": "secret"}
    memory_fields = user_preference(subject=subject, content=content, dedupe_key=dedupe_key)
    proposal = submit(agent.agent, create_payload(memory_fields, [make_evidence(agent.agent)], context))
    apply_released(proposal)
    memory = Memory.objects.get(pk=proposal.target_id)
    update = submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(memory.id),
            "base_revision": 1,
            "changes": {"content": {**content, "statement": f"Alice's updated secret {marker}"}},
            "evidence": [make_evidence(agent.agent).binding()],
            "policy_context": context,
            "rationale": f"she said {marker}",
        },
    )
    drive_existing(update, reviewers)
    served = _search(
        api, query=marker, filters={"subject": subject}, policy_context={"acting_for_subject": subject}
    )
    assert [item["memory"]["memory_id"] for item in served] == [str(memory.id)]
    assert api.get(f"/api/v1/memories/{memory.id}/?acting_for=user:{subject_id}").status_code == 200
    drive_existing(propose(agent, memory, "delete", context=context), reviewers)
    assert _search(api, filters={"subject": subject}) == []  # deleted: a read that finds nothing
    secrets = (marker, subject_id, dedupe_key)
    assert all(tables_holding(secret) for secret in secrets)  # the test sees each before the purge

    receipt = drive_existing(propose(agent, memory, "purge", context=context), reviewers)

    assert receipt.outcome == "applied"
    # The operator's grant to act for the person, and the sealed decisions naming whom each
    # reviewer decided for, are about the person, not the memory: they stay.
    grant_tables = [
        "reviews_historicalreviewdecision",
        "reviews_reviewdecision",
        "tenancy_delegation",
        "tenancy_historicaldelegation",
    ]
    assert {secret: sorted(tables_holding(secret)) for secret in secrets} == {
        marker: [],
        subject_id: grant_tables,
        dedupe_key: [],
    }
    assert not Memory.objects.filter(pk=memory.pk).exists()
    removed = receipt.effects["purged"]
    assert removed["memory_core.Memory"] == 1
    assert removed["memory_core.HistoricalMemory"] >= 4
    assert removed["memory_core.MemoryEvidence"] == 3  # revisions 1 and 2, and 3 (the delete) carries 2's
    assert removed["memory_core.MemoryVector"] == 3  # one per applied revision
    assert not MemoryVector.objects.filter(memory_id=memory.pk).exists()
    assert removed["proposals.Proposal"] == 4
    assert removed["memory_core.AccessEvent"] == 1  # the search that served it: its query blanked
    call_command("verify_receipts")


def _search(api, **body) -> list:
    response = api.post("/api/v1/recall/search", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_get_after_purge_is_404(agent, api, applied_memory, reviewers):
    drive(agent, applied_memory, "delete", [])
    drive(agent, applied_memory, "purge", reviewers)
    assert api.get(f"/api/v1/memories/{applied_memory.id}/").status_code == 404


def test_a_state_change_keeps_the_evidence_and_a_restored_memory_stays_fenced(
    agent, api, applied_memory, reviewers
):
    from provenance.services import invalidate_evidence_revision

    cited = api.get(f"/api/v1/memories/{applied_memory.id}/").json()["memory"]["evidence"]
    assert drive(agent, applied_memory, "expire", []).outcome == "applied"
    assert drive(agent, applied_memory, "restore", reviewers).outcome == "applied"
    view = api.get(f"/api/v1/memories/{applied_memory.id}/").json()
    assert (view["memory"]["revision"], view["memory"]["evidence"]) == (3, cited)
    invalidate_evidence_revision(
        revision=applied_memory.evidence_links.first().evidence_revision, reason="bad run"
    )
    assert api.get(f"/api/v1/memories/{applied_memory.id}/").json()["return_mode"] == "metadata_only"
    applied_memory.refresh_from_db()
    assert drive(agent, applied_memory, "expire", []).outcome == "applied"
    assert drive(agent, applied_memory, "restore", reviewers).outcome == "applied"
    assert api.get(f"/api/v1/memories/{applied_memory.id}/").json()["memory"]["state"] == "fenced"
    call_command("verify_receipts")
