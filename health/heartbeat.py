"""The executor workers' heartbeat: a row per worker node, touched on start and as tasks start.

Beat sends the outbox sweep every ``CUSTODIAN_SWEEP_SECONDS`` (5 s), so a worker that consumes
its queue takes a task at least that often even when nothing else is due; a busy worker takes
more. Each worker process writes at most once per ``RECORD_EVERY_SECONDS``, so the heartbeat
costs one small upsert per process every few seconds, not one per task. Writing it never fails
a task: a refused write is logged and the next task tries again.
"""

import logging
import time
from datetime import timedelta
from typing import Any

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from health.models import WorkerHeartbeat

logger = logging.getLogger(__name__)

RECORD_EVERY_SECONDS = 5.0
# Rows of nodes gone this long are dropped when a worker starts (a node name per host or pod).
FORGET_AFTER = timedelta(days=1)

_last_recorded: float | None = None  # this process's last write (monotonic clock)


def record_worker_seen(*, node: str) -> None:
    """Mark ``node`` as seen now (one upsert)."""
    with transaction.atomic():  # a savepoint if a caller holds a transaction: a failure stays here
        WorkerHeartbeat.objects.bulk_create(
            [WorkerHeartbeat(node=node, seen_at=timezone.now())],
            update_conflicts=True,
            unique_fields=["node"],
            update_fields=["seen_at"],
        )


def worker_started(sender: Any = None, **kwargs: Any) -> None:
    """``worker_ready``: record the node in the worker's main process, then let its connection go."""
    try:
        WorkerHeartbeat.objects.filter(seen_at__lt=timezone.now() - FORGET_AFTER).delete()
        record_worker_seen(node=str(getattr(sender, "hostname", "") or "executor"))
    except DatabaseError:
        logger.warning("could not record the worker's heartbeat", exc_info=True)
    finally:
        connection.close()  # the main process runs no tasks: hold no connection


def task_starting(sender: Any = None, task: Any = None, **kwargs: Any) -> None:
    """``task_prerun``: record the node, at most every ``RECORD_EVERY_SECONDS`` per process."""
    global _last_recorded
    request = getattr(task, "request", None)
    node = getattr(request, "hostname", None)
    if not node or getattr(request, "is_eager", False):
        return  # run in-process (``Task.apply``), not by a worker
    now = time.monotonic()
    if _last_recorded is not None and now - _last_recorded < RECORD_EVERY_SECONDS:
        return
    try:
        record_worker_seen(node=str(node))
    except DatabaseError:
        logger.warning("could not record the worker's heartbeat", exc_info=True)
        return
    _last_recorded = now
