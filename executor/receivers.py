"""Turn ``proposal_released`` into a durable outbox row in the same transaction."""

import logging

from django.db import transaction
from django.dispatch import receiver
from django.utils import timezone

from executor.models import OutboxEntry
from proposals.models import Proposal
from proposals.signals import proposal_released

logger = logging.getLogger(__name__)


@receiver(proposal_released, sender=Proposal, dispatch_uid="executor.enqueue_release")
def enqueue_release(sender, proposal: Proposal, available_at, **kwargs) -> None:
    entry = OutboxEntry.objects.create(
        tenant_id=proposal.tenant_id,
        proposal=proposal,
        action_digest=proposal.action_digest,
        available_at=available_at,
    )
    if available_at <= timezone.now():
        transaction.on_commit(lambda: nudge(entry.id))


def nudge(entry_id) -> None:
    """Ask a worker to apply the entry now; an optimisation, the sweep is the guarantee."""
    from executor.tasks import apply_entry_task

    try:
        apply_entry_task.apply_async(args=[str(entry_id)], task_id=str(entry_id))
    except Exception:  # the broker is down: the row is committed, the sweep will send it
        logger.warning("could not nudge outbox entry %s; the sweep will dispatch it", entry_id)
