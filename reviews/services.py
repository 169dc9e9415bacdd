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
from proposals.errors import ProposalNotFound, PublishNotPermitted
from proposals.models import Proposal
from proposals.services import conclude_review
from reviews.errors import (
    AlreadyDecided,
    DecisionNotPermitted,
    NotLowRisk,
    NotUnderReview,
    ReasonRequired,
    ReviewWindowClosed,
    SelfApprovalForbidden,
    StaleDigest,
)
from reviews.models import ReviewDecision
from reviews.selectors import approving_decisions, can_decide, is_submitter, viewable_tenants
from tenancy.selectors import publishing_tenants

Decision = ReviewDecision.Decision


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
    require_low_risk: bool = False,
) -> ReviewDecision:
    """Record one person's decision on the exact action they saw; release, veto or return it."""
    proposal = (
        Proposal.objects.select_for_update(of=("self",))
        .select_related("submitted_by", "tenant")
        .filter(pk=proposal_id, tenant__in=viewable_tenants(actor))
        .first()
    )
    if proposal is None:
        raise ProposalNotFound()
    _check_may_decide(actor, proposal, action_digest=action_digest, reason=reason)
    if require_low_risk and not proposal.is_low_risk:
        raise NotLowRisk()
    if ReviewDecision.objects.filter(proposal=proposal, actor=actor, action_digest=action_digest).exists():
        raise AlreadyDecided()
    recorded = ReviewDecision(
        tenant_id=proposal.tenant_id,
        proposal=proposal,
        actor=actor,
        represented_owner=represented_owner.strip() or actor.get_username(),
        decision=decision,
        reason=reason.strip(),
        action_digest=proposal.action_digest,
        proposal_version=proposal.version,
        policy_fingerprint=proposal.policy_fingerprint,
        channel=channel,
    )
    recorded.seal = recorded.compute_seal()
    recorded.save(force_insert=True)
    if decision == Decision.REJECT:
        conclude_review(proposal, status=Proposal.Status.REJECTED)
    elif decision == Decision.REQUEST_CHANGES:
        conclude_review(proposal, status=Proposal.Status.CHANGES_REQUESTED)
    elif len(approving_decisions(proposal)) >= proposal.required_approvals:
        conclude_review(proposal, status=Proposal.Status.RELEASED)
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
            decision = record_decision(
                actor=actor,
                proposal_id=proposal_id,
                decision=Decision.APPROVE,
                reason=reason,
                represented_owner=represented_owner,
                action_digest=digest,
                channel=ReviewDecision.Channel.BULK,
                require_low_risk=True,
            )
            results.append(BulkResult(proposal_id, decision=decision))
        except DomainError as error:
            results.append(BulkResult(proposal_id, error=error))
    return results
