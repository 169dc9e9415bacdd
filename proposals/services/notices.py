"""What proposals tell integrators: metadata of a proposal, recorded as notifications in the caller's
transaction (``notifications.services``). Never its fields, rationale or evidence."""

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from notifications import events
from notifications.events import Event
from notifications.models import Announcement
from notifications.services import record_events
from proposals.models import Proposal


def proposal_event(proposal: Proposal, event_type: str, **extra: Any) -> Event:
    """An event naming the proposal: its id, action, memory type, rule, classification and status."""
    deadline = proposal.review_deadline
    return Event(
        tenant_id=proposal.tenant_id,
        type=event_type,
        data={
            "proposal_id": str(proposal.pk),
            "action": proposal.action,
            "memory_type": proposal.memory_type,
            "rule": proposal.matched_rule,
            "classification": proposal.classification,
            "status": proposal.status,
            "submitted_by": str(proposal.submitted_by_id),
            "review_deadline": deadline.isoformat() if deadline else None,
            **extra,
        },
    )


def announce(proposals: Iterable[Proposal], event_type: str, **extra: Any) -> None:
    """Record ``event_type`` for each proposal (in bulk, in the caller's transaction)."""
    record_events([proposal_event(proposal, event_type, **extra) for proposal in proposals])


def announce_pending(proposals: Iterable[Proposal]) -> None:
    """Record ``proposal.pending_review`` for those of ``proposals`` now awaiting reviewers."""
    announce([p for p in proposals if p.status == Proposal.Status.PENDING_REVIEW], events.PENDING_REVIEW)


@transaction.atomic(durable=True)
def announce_expiring_reviews(*, limit: int = 500) -> int:
    """Record ``proposal.expiring`` once for each open review whose window closes within the notice."""
    now = timezone.now()
    soon = now + timedelta(hours=settings.CUSTODIAN_EXPIRING_NOTICE_HOURS)
    expiring = list(
        Proposal.objects.filter(
            status__in=[Proposal.Status.PENDING_REVIEW, Proposal.Status.CHANGES_REQUESTED],
            review_deadline__gt=now,
            review_deadline__lte=soon,
        )
        .exclude(pk__in=Announcement.objects.filter(event_type=events.EXPIRING).values("subject_id"))
        .order_by("review_deadline")[:limit]
    )
    Announcement.objects.bulk_create(
        [Announcement(event_type=events.EXPIRING, subject_id=p.pk) for p in expiring], ignore_conflicts=True
    )
    announce(expiring, events.EXPIRING)
    return len(expiring)
