"""Keep beat jobs that found nothing out of the INFO log.

The beat schedule runs the outbox sweep every few seconds and the maintenance sweeps every
minute; Celery reports each run three times at INFO (beat sent it, the worker received it, it
succeeded), so an idle service's log was almost nothing else. This filter, on those three
Celery loggers, turns a scheduled job's "sending" and "received" lines, and its "succeeded"
line when the job returned nothing done (``0``, ``None``, an empty list), into DEBUG lines,
dropped unless the logger is at DEBUG. A job that did something keeps its "succeeded" line,
and the sweeps log what they did at INFO themselves.

Plain ``logging``: ``dictConfig`` builds it while Django's settings load.
"""

import logging
from collections.abc import Iterable
from typing import Any

IDLE_RESULTS = frozenset({"0", "None", "[]", "()", "{}", "False"})


class IdleSweepFilter(logging.Filter):
    """Demote Celery's routine lines about the scheduled ``tasks`` to DEBUG (see the module)."""

    def __init__(self, tasks: Iterable[str] = ()) -> None:
        super().__init__()
        self.tasks = frozenset(tasks)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or not self._is_routine(record):
            return True
        if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            return False
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True

    def _is_routine(self, record: logging.LogRecord) -> bool:
        args: Any = record.args
        if record.name == "celery.beat":  # "Scheduler: Sending due task %s (%s)" % (entry, task)
            return isinstance(args, tuple) and len(args) == 2 and args[1] in self.tasks
        if not isinstance(args, dict) or args.get("name") not in self.tasks:
            return False
        if "return_value" in args:  # the "succeeded" line: its result as saferepr wrote it
            return str(args["return_value"]) in IDLE_RESULTS
        return "runtime" not in args  # the "received" line (a failure's line has other levels)
