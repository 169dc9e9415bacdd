"""Status steps taken inside the executor's or the review workflow's transaction."""

from collections import defaultdict

from django.db import transaction
from django.utils import timezone

from core.history import copy_to_history
from notifications import events
from proposals.models import Proposal
from proposals.services.notices import announce, announce_pending
from proposals.services.outbox import release
from registrations.services import return_to_draft


def record_executions(outcomes: list[tuple[Proposal, str, bool]]) -> None:
    """Record the executor's (proposal, outcome, applied) on locked, released proposals.

    One UPDATE per distinct outcome (a batch is mostly "applied") and one
    INSERT … SELECT of their history rows, instead of a save per proposal.
    """
    now = timezone.now()
    by_outcome = defaultdict(list)
    for proposal, outcome, applied in outcomes:
        proposal.transition_to(Proposal.Status.APPLIED if applied else Proposal.Status.NOT_APPLIED)
        proposal.outcome = outcome
        proposal.updated_at = now
        by_outcome[(proposal.status, outcome)].append(proposal.pk)
    for (status, outcome), ids in by_outcome.items():
        Proposal.objects.filter(pk__in=ids).update(status=status, outcome=outcome, updated_at=now)
    copy_to_history(Proposal, [proposal.pk for proposal, _, _ in outcomes], history_type="~", when=now)


def escalate_to_review(proposal: Proposal, *, failed_gates: list[str]) -> None:
    """Send a gated proposal whose gates failed to human review (never drop it)."""
    proposal.transition_to(Proposal.Status.PENDING_REVIEW)
    proposal.classification = Proposal.Classification.REVIEW_REQUIRED
    proposal.required_approvals = max(proposal.required_approvals, 1)
    proposal.reason_codes = [*proposal.reason_codes, *(f"gate_failed:{g}" for g in failed_gates)]
    proposal.outcome = "gate_failed"
    proposal.verdict_seal = proposal.compute_verdict_seal()
    proposal.save(
        update_fields=[
            "status",
            "classification",
            "required_approvals",
            "reason_codes",
            "outcome",
            "verdict_seal",
            "updated_at",
        ]
    )
    announce_pending([proposal])


# --- Steps taken by the review workflow, inside its transaction ---------------


_REFUSED = (Proposal.Status.REJECTED, Proposal.Status.EXPIRED)


def conclude_review(proposal: Proposal, *, status: str) -> None:
    """Move a locked proposal under review to rejected, changes_requested or released."""
    proposal.transition_to(status)
    proposal.save(update_fields=["status", "updated_at"])
    if status == Proposal.Status.RELEASED:
        release(proposal, available_at=timezone.now())
    elif proposal.action == Proposal.Action.REGISTER and status in (
        Proposal.Status.REJECTED,
        Proposal.Status.EXPIRED,
    ):
        return_to_draft(candidate_id=proposal.target_id)


@transaction.atomic(durable=True)
def expire_overdue_reviews(*, limit: int = 500) -> int:
    """Expire proposals whose review window closed; return how many."""
    overdue = (
        Proposal.objects.select_for_update(skip_locked=True)
        .filter(
            status__in=[Proposal.Status.PENDING_REVIEW, Proposal.Status.CHANGES_REQUESTED],
            review_deadline__lt=timezone.now(),
        )
        .order_by("review_deadline")[:limit]
    )
    count = 0
    expired = []
    for proposal in overdue:
        conclude_review(proposal, status=Proposal.Status.EXPIRED)
        expired.append(proposal)
        count += 1
    announce(expired, events.EXPIRED)
    return count
