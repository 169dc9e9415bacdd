"""Releasing a proposal: its outbox row, written in the caller's transaction, and the nudge after commit.

Inside a request the nudge is published after the response has been sent.

The row is the durable request; the broker message is only an optimisation
(the executor's sweep dispatches whatever a lost nudge missed). The task is
sent by name, so proposals never imports the executor that consumes it.
"""

import logging
from datetime import datetime
from functools import partial

from celery import current_app
from django.db import transaction
from django.utils import timezone

from core.after_response import after_response
from proposals.models import OutboxEntry, Proposal

logger = logging.getLogger(__name__)
APPLY_TASK = "executor.apply_entry"


def release(proposal: Proposal, *, available_at: datetime) -> OutboxEntry:
    """Hand a released proposal to the executor: one outbox row, nudged once the caller commits."""
    return enqueue(proposal, available_at=available_at)


def enqueue(
    proposal: Proposal,
    *,
    available_at: datetime,
    requeued_from: OutboxEntry | None = None,
    requested_by: str = "",
) -> OutboxEntry:
    """Write an outbox row for ``proposal`` (a release, or an operator's requeue of a dead entry)."""
    entry = OutboxEntry.objects.create(
        tenant_id=proposal.tenant_id,
        proposal=proposal,
        action_digest=proposal.action_digest,
        available_at=available_at,
        requeued_from=requeued_from,
        requested_by=requested_by,
    )
    if available_at <= timezone.now():
        transaction.on_commit(lambda: nudge(entry.id))
    return entry


def nudge(entry_id) -> None:
    """Ask a worker to apply the entry once the response is sent; if the broker is down the sweep sends it.

    Called at commit; inside a request the publish waits until the caller has its answer
    (``core.after_response``), so no submit waits on the broker.
    """
    after_response(partial(_publish, entry_id))


def _publish(entry_id) -> None:
    try:
        current_app.send_task(APPLY_TASK, args=[str(entry_id)], task_id=str(entry_id))
    except Exception:  # the row is committed: losing the nudge only delays the entry
        logger.warning("could not nudge outbox entry %s; the sweep will dispatch it", entry_id)
