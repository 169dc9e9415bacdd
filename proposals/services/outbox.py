"""Releasing a proposal: its outbox row, written in the caller's transaction, and the nudge after commit.

Inside a request the nudge is published after the response has been sent.

The row is the durable request; the broker message is only an optimisation
(the executor's sweep dispatches whatever a lost nudge missed). The task is
sent by name, so proposals never imports the executor that consumes it.

Coalesced nudges (``CUSTODIAN_NUDGE_COALESCE``: web and workers share the Redis cache). Under
load most per-entry messages found their entry already taken by an earlier batch, so a nudge is
``cache.add(NUDGE_KEY)`` and only the add that creates the key publishes a message, one without
an entry: "apply what is due". The worker taking it deletes the key, then leases due entries.
Why no entry waits for the sweep unless the broker loses a message:

- An entry is committed before its nudge runs. If its add creates the key, its own message follows.
- If the key exists, whoever created it publishes a message after creating it. That message's
  worker deletes whatever key is there, then leases, after this entry found the key (had it
  deleted earlier, the key this entry found would be gone), so after this entry committed: its
  lease sees the entry.
- A full lease may leave it behind; that worker nudges the same way before applying, and the
  argument repeats for the next lease (``executor.services.apply_nudged``).
- A key that expires or is deleted early only lets one more message through, never one fewer.
  A failed publish deletes the key so the next submit retries; entries that found the key in the
  meantime wait for the sweep, as every entry does while the broker is down.

Without coalescing (the embedded mode: each process has its own cache) every due entry is
published alone, its id as the task id.
"""

import logging
from datetime import datetime
from functools import partial
from typing import Any
from uuid import UUID

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from core.after_response import after_response
from proposals.models import OutboxEntry, Proposal
from telemetry.context import trace_context

logger = logging.getLogger(__name__)
APPLY_TASK = "executor.apply_entry"
NUDGE_KEY = "executor:nudge"
# How long a nudge whose message was lost can hold back the next ones (the sweep runs every 5 s).
NUDGE_SECONDS = 5


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
        trace_context=trace_context(),
    )
    if available_at <= timezone.now():
        transaction.on_commit(lambda: nudge(entry.id))
    return entry


def nudge(entry_id: UUID) -> None:
    """Ask a worker to apply the entry once the response is sent; if the broker is down the sweep sends it.

    Called at commit; inside a request the publish waits until the caller has its answer
    (``core.after_response``), so no submit waits on the broker.
    """
    if settings.CUSTODIAN_NUDGE_COALESCE:
        after_response(nudge_due)
    else:
        after_response(partial(_publish, entry_id))


def nudge_due() -> None:
    """Publish "apply what is due" unless such a message is already on its way (see above)."""
    try:
        if not cache.add(NUDGE_KEY, 1, timeout=NUDGE_SECONDS):
            return
    except Exception:  # the cache is down: publish uncoalesced rather than not at all
        logger.warning("could not reach the cache to coalesce an executor nudge; publishing it anyway")
    if not _send():
        clear_nudge()


def publish_nudge() -> None:
    """Publish "apply what is due" whatever the key says (the sweep: one more message, never one fewer)."""
    _send()


def clear_nudge() -> None:
    """Let the next committed entry publish its own nudge; a worker calls this before it leases."""
    try:
        cache.delete(NUDGE_KEY)
    except Exception:  # the key expires by itself; until then new entries wait for the sweep
        logger.warning("could not clear the executor nudge; it expires in %s s", NUDGE_SECONDS)


def _publish(entry_id: UUID) -> None:
    _send(f"outbox entry {entry_id}", args=[str(entry_id)], task_id=str(entry_id))


def _send(what: str = "what is due", **options: Any) -> bool:
    try:
        current_app.send_task(APPLY_TASK, **options)
    except Exception:  # the rows are committed: losing the nudge only delays them
        logger.warning("could not nudge the executor for %s; the sweep will dispatch it", what)
        return False
    return True
