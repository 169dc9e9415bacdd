"""What other processes' work adds to the metrics: signals in, the recording API out.

``core.signals`` carries submissions (web) and receipts (executor); Celery's task signals
time the executor's apply tasks in the worker process that ran them, and its process
shutdown signal retires that process's live gauges.
"""

import time
from typing import Any

from metrics import recording
from metrics.exposition import multiprocess_dir

APPLY_TASKS = {"executor.apply_entry": "apply_entry", "executor.apply_entries": "apply_entries"}
_STARTED = "_custodian_metrics_started"  # set on the task's request while it runs


def proposals_submitted(sender: Any = None, verdicts: Any = (), **kwargs: Any) -> None:
    recording.proposals_submitted(list(verdicts))


def receipts_appended(sender: Any = None, outcomes: Any = (), **kwargs: Any) -> None:
    recording.receipts_appended(list(outcomes))


def task_starting(sender: Any = None, task: Any = None, **kwargs: Any) -> None:
    if getattr(task, "name", None) in APPLY_TASKS:
        setattr(task.request, _STARTED, time.perf_counter())


def task_finished(sender: Any = None, task: Any = None, **kwargs: Any) -> None:
    started = getattr(getattr(task, "request", None), _STARTED, None)
    if started is not None:
        recording.entries_applied(task=APPLY_TASKS[task.name], seconds=time.perf_counter() - started)


def process_exiting(pid: int) -> None:
    """Drop a finished process's live gauge files (its counters and histograms stay counted)."""
    if multiprocess_dir():
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
