"""Each verdict of the default rule set, with its rule, reason codes and fingerprint."""

import pytest

from proposals.models import OutboxEntry, Proposal
from proposals.policy import active_rule_set
from provenance.services import add_evidence_revision
from tenancy.services import grant_delegation
from tests.factories import (
    apply_released,
    create_payload,
    factor_fact,
    make_evidence,
    owner_context,
    submit,
    user_preference,
)


def _submit_create(agent, memory, context=None, evidence=True):
    revisions = [make_evidence(agent.agent)] if evidence else []
    return submit(agent.agent, create_payload(memory, revisions, context))


def _assert_recorded(proposal, classification, rule, reason):
    rules = active_rule_set()
    assert proposal.classification == classification
    assert proposal.matched_rule == rule
    assert reason in proposal.reason_codes
    assert proposal.policy_fingerprint == rules.fingerprint
    assert proposal.policy_version == rules.version


def test_owner_explicit_low_risk_preference_is_auto_applied(agent):
    proposal = _submit_create(agent, user_preference())
    _assert_recorded(proposal, "auto_apply", "auto-owner-preference", "owner_explicit_preference")
    assert proposal.status == Proposal.Status.RELEASED
    assert OutboxEntry.objects.filter(proposal=proposal).count() == 1


def test_preference_for_someone_else_is_reviewed(agent):
    grant_delegation(agent=agent.agent, subject={"kind": "user", "id": "someone-else"})
    context = owner_context(subject={"kind": "user", "id": "someone-else"})
    proposal = _submit_create(agent, user_preference(), context)
    _assert_recorded(proposal, "review_required", "review-default", "default_review")
    assert proposal.status == Proposal.Status.PENDING_REVIEW
    assert not OutboxEntry.objects.filter(proposal=proposal).exists()


def test_episodic_event_with_valid_evidence_is_gated(agent):
    memory = user_preference(type="episodic_event", content={"statement": "Backtest run 42 finished"})
    proposal = _submit_create(agent, memory)
    _assert_recorded(proposal, "policy_gated", "gated-episodic", "episodic_event_gated")
    assert proposal.gates == ["evidence_valid", "target_unchanged", "no_open_conflict"]
    assert proposal.status == Proposal.Status.RELEASED


def test_factor_conclusion_in_org_scope_needs_review(agent):
    proposal = _submit_create(agent, factor_fact())
    _assert_recorded(proposal, "review_required", "review-shared-facts", "shared_fact_requires_review")
    assert proposal.required_approvals == 1


def test_restricted_memory_needs_two_approvals(agent):
    proposal = _submit_create(agent, user_preference(sensitivity="restricted"))
    _assert_recorded(proposal, "review_required", "review-restricted", "restricted_sensitivity")
    assert proposal.required_approvals == 2


def test_high_risk_is_reviewed(agent):
    proposal = _submit_create(agent, user_preference(), owner_context(risk_level="high"))
    _assert_recorded(proposal, "review_required", "review-high-risk", "high_risk")


def test_no_evidence_is_reviewed(agent):
    proposal = _submit_create(agent, user_preference(), evidence=False)
    _assert_recorded(proposal, "review_required", "review-unsupported", "no_evidence")


def test_superseded_evidence_is_denied(agent):
    revision = make_evidence(agent.agent)
    add_evidence_revision(source=revision.source, agent=agent.agent, content={"ic_mean": 0.0})
    proposal = submit(agent.agent, create_payload(user_preference(), [revision]))
    _assert_recorded(proposal, "denied", "deny-evidence-not-valid", "evidence_invalid")
    assert proposal.status == Proposal.Status.DENIED


def test_update_of_missing_memory_is_denied(agent):
    payload = {
        "action": "update",
        "memory_id": "00000000-0000-4000-8000-000000000000",
        "base_revision": 1,
        "changes": {"confidence": 0.5},
        "evidence": [make_evidence(agent.agent).binding()],
    }
    proposal = submit(agent.agent, payload)
    _assert_recorded(proposal, "denied", "deny-missing-target", "target_not_found")


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        ({"evidence": "unknown"}, "denied"),
        ({"evidence": "valid", "dedupe": "contradiction"}, "denied"),
        ({"evidence": "valid", "dedupe": "duplicate"}, "denied"),
    ],
)
def test_engine_first_matching_rule_wins(facts, expected):
    from proposals.policy import classify

    base = {
        "action": "create",
        "type": "preference",
        "scope": "user",
        "sensitivity": "internal",
        "risk_level": "low",
        "target": "new",
        "dedupe": "none",
        "owner_explicit": True,
    }
    assert classify(active_rule_set(), {**base, **facts}).classification == expected


def _event(statement: str) -> dict:
    return user_preference(type="episodic_event", dedupe_key="cadence", content={"statement": statement})


def test_same_dedupe_key_with_new_content_is_a_denied_contradiction(agent):
    apply_released(_submit_create(agent, _event("Alice asked for weekly summaries")))
    proposal = _submit_create(agent, _event("Alice asked for daily summaries"))
    _assert_recorded(proposal, "denied", "deny-contradiction", "contradicts_active_memory")


def test_same_dedupe_key_with_same_content_is_a_denied_duplicate(agent):
    apply_released(_submit_create(agent, _event("Alice asked for weekly summaries")))
    proposal = _submit_create(agent, _event("Alice asked for weekly summaries"))
    _assert_recorded(proposal, "denied", "deny-duplicate", "duplicate_of_active_memory")
