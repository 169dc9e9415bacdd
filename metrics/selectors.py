"""The reads behind the scrape-time gauges: four queries per scrape, whatever the data's size.

Each is one aggregate over an indexed head (``outbox_pending_idx`` and ``outbox_lease_idx``,
``proposal_queue_age_idx``, ``WorkerHeartbeat.seen_at``, the verifications' tenant index),
so a scrape costs the same with ten tenants or ten thousand (``tests/metrics``).
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Max, Min, OuterRef, Q, Subquery

from executor.models import ChainVerification
from health.models import WorkerHeartbeat
from proposals.models import OutboxEntry, Proposal
from tenancy.models import Tenant


@dataclass(frozen=True)
class Backlog:
    """What is due for the executor: how many entries, and when the longest-waiting became due."""

    due: int
    oldest_due_at: datetime | None


@dataclass(frozen=True)
class Queue:
    """One tenant's pending reviews: how many, and when the oldest was submitted."""

    tenant: str
    depth: int
    oldest_at: datetime


@dataclass(frozen=True)
class Workers:
    latest_seen_at: datetime | None
    recent: int


@dataclass(frozen=True)
class Verifications:
    """The newest finished chain verification, and how many tenants' newest one found a break."""

    latest_finished_at: datetime | None
    broken_tenants: int


def outbox_backlog(now: datetime) -> Backlog:
    """Due as the sweep reads it: pending since ``available_at``, or dispatched past its lease."""
    pending = Q(status=OutboxEntry.Status.PENDING, available_at__lte=now)
    expired = Q(status=OutboxEntry.Status.DISPATCHED, lease_expires_at__lt=now)
    row = OutboxEntry.objects.filter(pending | expired).aggregate(
        due=Count("pk"),
        oldest_pending=Min("available_at", filter=pending),
        oldest_expired=Min("lease_expires_at", filter=expired),
    )
    moments = [moment for moment in (row["oldest_pending"], row["oldest_expired"]) if moment is not None]
    return Backlog(due=row["due"], oldest_due_at=min(moments, default=None))


def review_queues() -> list[Queue]:
    """Every tenant with proposals waiting for a person, deepest queue first."""
    rows = (
        Proposal.objects.filter(status=Proposal.Status.PENDING_REVIEW)
        .order_by()
        .values("tenant__name")
        .annotate(depth=Count("pk"), oldest_at=Min("created_at"))
    )
    queues = [Queue(row["tenant__name"], row["depth"], row["oldest_at"]) for row in rows]
    return sorted(queues, key=lambda queue: (-queue.depth, queue.tenant))


def workers(now: datetime) -> Workers:
    bound = timedelta(seconds=settings.CUSTODIAN_READY_WORKER_SECONDS)
    row = WorkerHeartbeat.objects.aggregate(
        latest=Max("seen_at"), recent=Count("pk", filter=Q(seen_at__gte=now - bound))
    )
    return Workers(latest_seen_at=row["latest"], recent=row["recent"])


def verifications() -> Verifications:
    """Finished verifications: the newest overall, and the tenants whose newest one is broken.

    One pass over tenants, each reading the head of its index on (tenant, finished_at): the
    cost grows with tenants, not with the verifications every daily run adds.
    """
    newest = ChainVerification.objects.filter(tenant_id=OuterRef("pk"), finished_at__isnull=False).order_by(
        "-finished_at"
    )
    row = Tenant.objects.annotate(
        last_finished_at=Subquery(newest.values("finished_at")[:1]),
        last_status=Subquery(newest.values("status")[:1]),
    ).aggregate(
        latest=Max("last_finished_at"),
        broken=Count("pk", filter=Q(last_status=ChainVerification.Status.BROKEN)),
    )
    return Verifications(latest_finished_at=row["latest"], broken_tenants=row["broken"])
