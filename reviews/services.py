"""Reviews own decisions: separation of duties, distinct approvers, vetoes, release.

``record_decision`` locks the proposal row, so two reviewers deciding at
once are serialised: a proposal is never released twice, and never after a
veto. The release to the outbox happens in the same transaction as the
decision that completes the approvals.
"""

import uuid
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from core.errors import DomainError
from notifications import events
from proposals.errors import ProposalNotFound, PublishNotPermitted
from proposals.models import Proposal
from proposals.selectors import dedupe_conflicts
from proposals.services import conclude_review
from proposals.services.notices import announce
from reviews.errors import (
    AlreadyDecided,
    DecidedTogetherRefused,
    DecisionNotPermitted,
    NotAConflict,
    NotLowRisk,
    NotUnderReview,
    OwnerNotRepresentable,
    ReasonRequired,
    ReviewWindowClosed,
    SelfApprovalForbidden,
    StaleDigest,
)
from reviews.models import SEAL_VERSION, ReviewDecision
from reviews.selectors import (
    approving_decisions,
    can_decide,
    is_submitter,
    represented_owner,
    viewable_tenants,
)
from tenancy.selectors import publishing_tenants

Decision = ReviewDecision.Decision


@dataclass(frozen=True)
class _Seen:
    """One person's decision on the exact action they saw (its digest), and how it reached us."""

    proposal_id: uuid.UUID
    decision: str
    reason: str
    represented_owner: str
    action_digest: str
    channel: str


@transaction.atomic(durable=True)
def record_decision(
    *,
    actor,
    proposal_id: uuid.UUID,
    decision: str,
    reason: str,
    represented_owner: str,
    action_digest: str,
    channel: str,
) -> ReviewDecision:
    """Record one person's decision on the exact action they saw; release, veto or return it."""
    seen = _Seen(
        proposal_id=proposal_id,
        decision=decision,
        reason=reason,
        represented_owner=represented_owner,
        action_digest=action_digest,
        channel=channel,
    )
    return _decide(actor, seen)


def _decide(actor, seen: _Seen, *, require_low_risk: bool = False) -> ReviewDecision:
    """The body of ``record_decision``, inside a transaction the caller owns."""
    proposal = (
        Proposal.objects.select_for_update(of=("self",))
        .select_related("submitted_by", "tenant")
        .filter(pk=seen.proposal_id, tenant__in=viewable_tenants(actor))
        .first()
    )
    if proposal is None:
        raise ProposalNotFound()
    _check_may_decide(actor, proposal, action_digest=seen.action_digest, reason=seen.reason)
    if require_low_risk and not proposal.is_low_risk:
        raise NotLowRisk()
    if ReviewDecision.objects.filter(
        proposal=proposal, actor=actor, action_digest=seen.action_digest
    ).exists():
        raise AlreadyDecided()
    owner = represented_owner(actor, proposal, seen.represented_owner)
    if owner is None:
        raise OwnerNotRepresentable()
    recorded = ReviewDecision(
        tenant_id=proposal.tenant_id,
        proposal=proposal,
        actor=actor,
        represented_owner=owner,
        decision=seen.decision,
        reason=seen.reason.strip(),
        action_digest=proposal.action_digest,
        proposal_version=proposal.version,
        policy_fingerprint=proposal.policy_fingerprint,
        channel=seen.channel,
        seal_version=SEAL_VERSION,
    )
    recorded.seal = recorded.compute_seal()
    recorded.save(force_insert=True)
    if seen.decision == Decision.REJECT:
        conclude_review(proposal, status=Proposal.Status.REJECTED)
    elif seen.decision == Decision.REQUEST_CHANGES:
        conclude_review(proposal, status=Proposal.Status.CHANGES_REQUESTED)
    elif len(approving_decisions(proposal)) >= proposal.required_approvals:
        conclude_review(proposal, status=Proposal.Status.RELEASED)
    announce([proposal], events.DECIDED, decision=seen.decision)
    return recorded


def _check_may_decide(actor, proposal: Proposal, *, action_digest: str, reason: str) -> None:
    """Raise the first rule the decision would break, in the order a person would want to hear it."""
    if not can_decide(actor, proposal.tenant):
        raise DecisionNotPermitted()
    if is_submitter(actor, proposal):
        raise SelfApprovalForbidden()
    if proposal.action == Proposal.Action.REGISTER:
        # Publishing a registration: a person who may publish, and never the operator who asked.
        if not publishing_tenants(actor).filter(pk=proposal.tenant_id).exists():
            raise PublishNotPermitted()
        if proposal.fields.get("requested_by") == actor.pk:
            raise SelfApprovalForbidden()
    if proposal.status != Proposal.Status.PENDING_REVIEW:
        raise NotUnderReview(proposal_status=proposal.status)
    if proposal.review_deadline and proposal.review_deadline < timezone.now():
        raise ReviewWindowClosed()
    if action_digest != proposal.action_digest:
        raise StaleDigest(current_digest=proposal.action_digest)
    if not reason.strip():
        raise ReasonRequired()


@dataclass(frozen=True)
class BulkResult:
    proposal_id: uuid.UUID
    decision: ReviewDecision | None = None
    error: DomainError | None = None


def bulk_approve(
    *, actor, items: list[tuple[uuid.UUID, str]], reason: str, represented_owner: str
) -> list[BulkResult]:
    """Approve many low-risk proposals with one reason: one decision each, each checked on its own.

    Each item is its own transaction, so one refusal (stale digest, not low
    risk) does not undo the others.
    """
    results = []
    for proposal_id, digest in items:
        try:
            seen = _Seen(
                proposal_id=proposal_id,
                decision=Decision.APPROVE,
                reason=reason,
                represented_owner=represented_owner,
                action_digest=digest,
                channel=ReviewDecision.Channel.BULK,
            )
            with transaction.atomic(durable=True):  # one transaction each, as ``record_decision`` takes
                decision = _decide(actor, seen, require_low_risk=True)
            results.append(BulkResult(proposal_id, decision=decision))
        except DomainError as error:
            results.append(BulkResult(proposal_id, error=error))
    return results


@dataclass(frozen=True)
class TogetherItem:
    proposal_id: uuid.UUID
    action_digest: str  # of the action the person saw for this proposal
    decision: str


@transaction.atomic(durable=True)
def decide_together(
    *, actor, proposal_id: uuid.UUID, items: list[TogetherItem], reason: str, represented_owner: str
) -> list[ReviewDecision]:
    """Decide a proposal and the pending proposals it conflicts with: all of them, or none.

    Each item becomes its own ``ReviewDecision`` on its own digest, with every
    check ``record_decision`` makes. One transaction: if any item is refused
    (changed since seen, already decided, the person's own), nothing is
    recorded, so "approve this, reject the rivals" never half happens. The
    others must be pending proposals that claim the same dedupe key as
    ``proposal_id``; rows are locked in id order, so two people deciding
    overlapping sets wait for each other instead of deadlocking.
    """
    allowed = {proposal_id} | _pending_conflict_ids(actor, proposal_id)
    for item in items:
        if item.proposal_id not in allowed:
            raise DecidedTogetherRefused(
                f"{item.proposal_id}: {NotAConflict.title}.", proposal_id=str(item.proposal_id)
            )
    decisions = []
    for item in sorted(items, key=lambda item: item.proposal_id):
        try:
            decisions.append(
                _decide(
                    actor,
                    _Seen(
                        proposal_id=item.proposal_id,
                        decision=item.decision,
                        reason=reason,
                        represented_owner=represented_owner,
                        action_digest=item.action_digest,
                        channel=ReviewDecision.Channel.UI,
                    ),
                )
            )
        except DomainError as refusal:
            raise DecidedTogetherRefused(
                f"{item.proposal_id}: {refusal.detail}", proposal_id=str(item.proposal_id), cause=refusal.code
            ) from refusal
    return decisions


def _pending_conflict_ids(actor, proposal_id: uuid.UUID) -> set[uuid.UUID]:
    proposal = Proposal.objects.filter(pk=proposal_id, tenant__in=viewable_tenants(actor)).first()
    if proposal is None:
        raise ProposalNotFound()
    return {other.pk for other in dedupe_conflicts(proposal).proposals}
