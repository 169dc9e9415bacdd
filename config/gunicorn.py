"""gunicorn settings shared by ``make run`` (bin/run-all) and the benchmark stack (bench/stack.py).

Sync workers, one request at a time per process and one persistent database connection each.
Threaded workers (``gthread``, ``CUSTODIAN_WEB_THREADS`` > 1) keep a client's connection open
between requests, but measured beside sync workers with wrk on this 2-core machine they gained
nothing (bench/HISTORY.md): a submit's ~8 ms of CPU dwarfs a
reconnect on the loopback, and one thread per worker pinned keep-alive connections unevenly.
With threads each thread holds its own database connection (Django's connections are per
thread), at most workers x threads of them. Command-line flags (``--workers``, ``--bind``)
override these.

Every statement a web worker runs is bounded (``CUSTODIAN_STATEMENT_TIMEOUT_MS``, read by
config/settings.py in the workers): PostgreSQL gives up on a statement well before gunicorn's
``timeout`` would kill the worker, so a slow query answers a 503 problem (``query_timeout``)
instead of a killed worker and the proxy's error page, and the worker serves the next request.
The executor and management commands never load this file and run unbounded.

Metrics run in prometheus_client's multiprocess mode: ``on_starting`` picks the directory
every worker writes to (``PROMETHEUS_MULTIPROC_DIR``, fresh when nothing set it), ``child_exit``
retires a dead worker's live gauges; any worker's GET /metrics adds all of them up.
"""

import os

from gunicorn import glogging

from telemetry.logs import logging_config

timeout = int(os.environ.get("CUSTODIAN_WEB_TIMEOUT", 30))  # seconds of silence before a worker is killed
statement_budget = int(os.environ.setdefault("CUSTODIAN_STATEMENT_TIMEOUT_MS", "5000") or 0)
if statement_budget and timeout * 1000 <= statement_budget:
    raise ValueError("CUSTODIAN_STATEMENT_TIMEOUT_MS must stay below gunicorn's timeout")
workers = int(os.environ.get("CUSTODIAN_WEB_WORKERS", 2))
threads = int(os.environ.get("CUSTODIAN_WEB_THREADS", 1))
worker_class = "gthread" if threads > 1 else "sync"
keepalive = 5  # seconds an idle keep-alive connection is held by threaded workers (default 2)

# gunicorn's own lines (start-up, worker exits) go through the same structlog chain as Django's
# (telemetry.logs), so the web process writes one JSON object per line too. Its access log stays
# off unless --access-logfile asks for it: telemetry.middleware writes one line per request.
logconfig_dict = logging_config(
    log_format=os.environ.get("CUSTODIAN_LOG_FORMAT", "json"),
    level=os.environ.get("LOG_LEVEL", "INFO"),
    quiet_tasks=[],
)
logconfig_dict["loggers"] |= {
    "gunicorn.error": {"level": "INFO", "handlers": [], "propagate": True},
    "gunicorn.access": {"level": "INFO", "handlers": [], "propagate": False},
}


class StructuredLogger(glogging.Logger):
    """gunicorn's logger, whose access log a ``logconfig_dict`` alone does not switch on."""

    def _compute_access_log_enabled(self) -> bool:
        return bool(self.cfg.accesslog)


logger_class = StructuredLogger


def on_starting(server: object) -> None:
    """Choose the metrics directory before any worker forks (``metrics.multiprocess``)."""
    from metrics.multiprocess import prepare_directory

    prepare_directory()


def child_exit(server: object, worker: object) -> None:
    """A worker is gone: retire its live gauges, keep what it counted."""
    from metrics.multiprocess import worker_exited

    worker_exited(int(getattr(worker, "pid", 0)))
