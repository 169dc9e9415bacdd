"""The multiprocess directory's lifecycle, for gunicorn's hooks (``config/gunicorn.py``).

Plain Python, no Django: gunicorn's master loads it before any app. prometheus_client picks
its multiprocess mode when first imported, by whether ``PROMETHEUS_MULTIPROC_DIR`` is set, so
the directory is chosen before any worker starts. Whoever starts processes that share one
directory starts it empty: ``bin/run-all`` for its web server and executor; gunicorn alone,
when nothing set the variable, makes a fresh one of its own.
"""

import os
import tempfile

VARIABLE = "PROMETHEUS_MULTIPROC_DIR"


def prepare_directory() -> str:
    """Return the directory every forked worker will write to: the one set, else a fresh one.

    ``CUSTODIAN_METRICS=0`` (or ``CUSTODIAN_OBSERVABILITY=off``) leaves it unset: nothing records.
    """
    if os.environ.get("CUSTODIAN_METRICS") == "0" or os.environ.get("CUSTODIAN_OBSERVABILITY") == "off":
        return ""
    path = os.environ.get(VARIABLE)
    if path:
        os.makedirs(path, exist_ok=True)
    else:
        path = tempfile.mkdtemp(prefix="custodian-metrics-")
        os.environ[VARIABLE] = path
    return path


def worker_exited(pid: int) -> None:
    """Retire a dead worker's live gauges (``livesum``: the requests it had in progress)."""
    if os.environ.get(VARIABLE):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
