"""Celery tasks: thin shells that load by id and call the executor services."""

import os
import socket
from typing import Any

from celery import Task
from django.conf import settings

from core.tasks import shared_task
from executor.services import (
    VERIFY_CHAIN_TASK,
    apply_entries,
    apply_nudged,
    embed_missing,
    embed_revisions,
    lease_due_entries,
    run_chain_verification,
    sweep_outbox,
)
from proposals.models import OutboxEntry


def _identity(task: Task) -> dict[str, Any]:
    """The worker process and task a receipt names."""
    return {"host": socket.gethostname(), "pid": os.getpid(), "task_id": task.request.id or ""}


@shared_task(name="executor.apply_entry", bind=True, acks_late=True, ignore_result=True)
def apply_entry_task(self: Task, entry_id: str | None = None) -> None:
    """Apply what is due after a nudge: coalesced (no entry id), or one entry's and what else is due.

    A per-entry nudge (the embedded mode, or a message queued before coalescing was deployed)
    returns after one indexed read when an earlier batch already took its entry.
    """
    if entry_id is None:
        apply_nudged(worker=_identity(self))
        return
    if not OutboxEntry.objects.filter(pk=entry_id, status=OutboxEntry.Status.PENDING).exists():
        return  # applied, or leased by a batch or the sweep (which redelivers it if that fails)
    others = lease_due_entries(limit=settings.CUSTODIAN_EXECUTOR_BATCH - 1)
    apply_entries(entry_ids=list(dict.fromkeys([entry_id, *map(str, others)])), worker=_identity(self))


@shared_task(name="executor.apply_entries", bind=True, acks_late=True, ignore_result=True)
def apply_entries_task(self: Task, entry_ids: list[str]) -> None:
    """Apply a batch the sweep leased; a full batch pulls the next sweep instead of waiting for beat."""
    apply_entries(entry_ids=entry_ids, worker=_identity(self))
    if len(entry_ids) >= settings.CUSTODIAN_EXECUTOR_BATCH:
        sweep_outbox_task.delay()


@shared_task(name="executor.embed_revisions", acks_late=True, ignore_result=True)
def embed_revisions_task(revisions: list[list[Any]]) -> None:
    """Embed the revisions a committed batch applied (``CUSTODIAN_VECTORS=queued``)."""
    embed_revisions(revisions=[(memory_id, revision) for memory_id, revision in revisions])


@shared_task(name="executor.embed_missing", ignore_result=True)
def embed_missing_task() -> int:
    """Embed the settled revisions still without a vector (a lost ``embed_revisions`` message)."""
    return embed_missing()


@shared_task(name="executor.sweep_outbox", ignore_result=True)
def sweep_outbox_task() -> int:
    """Dispatch what is due: the guarantee behind the on-commit nudge, the backlog path, and recovery."""
    batches = sweep_outbox()
    for batch in batches:
        apply_entries_task.delay(batch)
    return sum(map(len, batches))


@shared_task(name=VERIFY_CHAIN_TASK, acks_late=True, ignore_result=True)
def verify_chain_task(verification_id: str) -> None:
    """Run one "verify now" an auditor asked for in the admin."""
    run_chain_verification(verification_id=verification_id)
