"""Every review rule, enforced by the service all channels share."""

from datetime import timedelta

import pytest
from django.utils import timezone

from executor.models import Receipt
from memory_core.models import Memory
from proposals.errors import ProposalNotFound
from proposals.models import OutboxEntry, Proposal
from proposals.services import amend_proposal, expire_overdue_reviews
from reviews import errors
from reviews.models import ReviewDecision
from reviews.selectors import approving_decisions, decision_history, proposal_owners
from reviews.services import bulk_approve, record_decision
from tests.factories import (
    apply_released,
    as_payload,
    create_payload,
    factor_fact,
    make_evidence,
    make_person,
    submit,
    user_preference,
)


def decide(user, proposal, decision="approve", reason="checked the IC table", digest=None, **extra):
    return record_decision(
        actor=user,
        proposal_id=proposal.pk,
        decision=decision,
        reason=reason,
        represented_owner=extra.pop("represented_owner", ""),
        action_digest=digest or proposal.action_digest,
        channel="api",
        **extra,
    )


def _status(proposal) -> str:
    proposal.refresh_from_db()
    return proposal.status


def test_approval_releases_to_the_outbox_in_the_same_transaction(pm, factor_proposal):
    decision = decide(pm, factor_proposal)
    assert _status(factor_proposal) == Proposal.Status.RELEASED
    assert OutboxEntry.objects.filter(proposal=factor_proposal).count() == 1
    assert (decision.actor, decision.represented_owner, decision.action_digest) == (
        pm,
        next(iter(proposal_owners(factor_proposal))),
        factor_proposal.action_digest,
    )


def test_released_proposal_applies_with_its_decisions_on_the_receipt(pm, factor_proposal):
    decision = decide(pm, factor_proposal)
    receipt = apply_released(factor_proposal)
    assert receipt.outcome == Receipt.Outcome.APPLIED
    assert receipt.decision_ids == [str(decision.id)]
    assert Memory.objects.get(pk=factor_proposal.target_id).content["factor"] == "momentum_12_1"


def test_two_approvals_must_come_from_distinct_people(pm, pm2, restricted_proposal):
    decide(pm, restricted_proposal)
    assert _status(restricted_proposal) == Proposal.Status.PENDING_REVIEW
    with pytest.raises(errors.AlreadyDecided):
        decide(pm, restricted_proposal)
    decide(pm2, restricted_proposal)
    assert _status(restricted_proposal) == Proposal.Status.RELEASED
    assert len(approving_decisions(restricted_proposal)) == 2


def test_submitters_linked_user_cannot_decide(linked_user, factor_proposal):
    with pytest.raises(errors.SelfApprovalForbidden):
        decide(linked_user, factor_proposal)
    assert not ReviewDecision.objects.exists()


def test_auditor_may_view_but_never_decide(auditor, factor_proposal):
    with pytest.raises(errors.DecisionNotPermitted):
        decide(auditor, factor_proposal)


def test_reviewer_of_another_tenant_does_not_even_find_it(outsider, factor_proposal):
    with pytest.raises(ProposalNotFound):
        decide(outsider, factor_proposal)


def test_reject_is_a_terminal_veto(agent, pm, pm2, restricted_proposal):
    decide(pm, restricted_proposal)
    decide(pm2, restricted_proposal, decision="reject", reason="look-ahead bias")
    assert _status(restricted_proposal) == Proposal.Status.REJECTED
    with pytest.raises(errors.NotUnderReview):
        decide(make_person("pm-3", agent.tenant), restricted_proposal)
    assert not OutboxEntry.objects.filter(proposal=restricted_proposal).exists()


def test_blank_reason_is_refused(pm, factor_proposal):
    with pytest.raises(errors.ReasonRequired):
        decide(pm, factor_proposal, reason="   ")


def test_amendment_makes_earlier_decisions_stale(agent, pm, pm2, restricted_proposal):
    decide(pm, restricted_proposal)
    decide(pm2, restricted_proposal, decision="request_changes", reason="cite the neutralised run")
    assert _status(restricted_proposal) == Proposal.Status.CHANGES_REQUESTED
    old_digest = restricted_proposal.action_digest
    amended = _amend(agent, restricted_proposal)
    assert amended.action_digest != old_digest
    assert (amended.status, amended.version) == (Proposal.Status.PENDING_REVIEW, 2)
    assert [d.stale for d in decision_history(amended)] == [True, True]
    assert approving_decisions(amended) == []
    with pytest.raises(errors.StaleDigest):
        decide(pm, amended, digest=old_digest)
    decide(pm, amended)
    assert _status(amended) == Proposal.Status.PENDING_REVIEW  # pm's old approval no longer counts
    assert amended.history.count() >= 3


def _amend(agent, proposal):
    payload = create_payload(
        factor_fact(
            sensitivity="restricted", content={"statement": "momentum_12_1 IC halves after neutralisation"}
        ),
        [make_evidence(agent.agent)],
    )
    return amend_proposal(agent=agent.agent, proposal=proposal, payload=as_payload(payload))


def test_only_a_proposal_with_changes_requested_can_be_amended(agent, factor_proposal):
    with pytest.raises(Exception, match="changes requested"):
        _amend(agent, factor_proposal)


def test_review_window_closes_and_the_sweep_expires_it(pm, factor_proposal):
    Proposal.objects.filter(pk=factor_proposal.pk).update(
        review_deadline=timezone.now() - timedelta(minutes=1)
    )
    with pytest.raises(errors.ReviewWindowClosed):
        decide(pm, factor_proposal)
    assert expire_overdue_reviews() == 1
    assert _status(factor_proposal) == Proposal.Status.EXPIRED


def test_default_rules_give_factor_conclusions_a_review_window(factor_proposal):
    assert factor_proposal.review_deadline is not None
    assert factor_proposal.review_deadline > timezone.now() + timedelta(days=6)


def test_bulk_approve_records_one_decision_per_proposal_with_its_own_digest(agent, pm):
    low = [
        submit(
            agent.agent,
            create_payload(
                user_preference(content={"statement": f"note {n}"}),
                [make_evidence(agent.agent)],
                {"risk_level": "low"},
            ),
        )
        for n in range(4)
    ]
    restricted = submit(
        agent.agent, create_payload(factor_fact(sensitivity="restricted"), [make_evidence(agent.agent)])
    )
    items = [(p.pk, p.action_digest) for p in low[:3]] + [
        (low[3].pk, "0" * 64),
        (restricted.pk, restricted.action_digest),
    ]
    results = bulk_approve(actor=pm, items=items, reason="routine preferences", represented_owner="")
    assert [type(r.error).__name__ if r.error else "ok" for r in results] == [
        "ok",
        "ok",
        "ok",
        "StaleDigest",
        "NotLowRisk",
    ]
    assert ReviewDecision.objects.filter(channel="bulk").count() == 3
    assert {_status(p) for p in low[:3]} == {Proposal.Status.RELEASED}
    assert _status(restricted) == Proposal.Status.PENDING_REVIEW


def test_decisions_are_immutable(pm, factor_proposal):
    decision = decide(pm, factor_proposal)
    decision.reason = "rewritten"
    with pytest.raises(TypeError):
        decision.save()
    with pytest.raises(TypeError):
        decision.delete()
    with pytest.raises(TypeError):
        ReviewDecision.objects.update(reason="x")
