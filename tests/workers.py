"""Run real Celery worker processes against the test database and broker."""

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from django.conf import settings
from django.db import connection

from executor.worker import worker_command

BASE_DIR = Path(__file__).resolve().parent.parent


def connect_as(role: str | None = None):
    """Return an autocommit psycopg connection to the test run's database as ``role`` (None: owner)."""
    import psycopg

    db = connection.settings_dict
    return psycopg.connect(
        host=db["HOST"] or "127.0.0.1",
        port=db["PORT"] or 5432,
        dbname=db["NAME"],
        user=role or db["USER"],
        autocommit=True,
    )


def test_database_url(role: str | None = None) -> str:
    """Return a URL for the database this test session uses (``test_…``), as ``role`` if given."""
    db = connection.settings_dict
    auth = role or db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@contextlib.contextmanager
def celery_worker(
    tmp_path: Path,
    *,
    beat: bool = False,
    concurrency: int = 2,
    stderr: Path | None = None,
    queues: tuple[str, ...] = ("executor",),
    kill: bool = False,
) -> Iterator[subprocess.Popen]:
    """Start ``celery worker`` (optionally with beat) on ``queues`` as a subprocess; stop it on exit.

    Its output goes to ``worker.log``; with ``stderr``, its log lines (stderr) go there instead,
    apart from what Celery prints to stdout.

    On exit the worker gets SIGTERM (a warm shutdown: the tasks it holds finish, which tests that
    check their effects after the block rely on) and is waited for; what is left of its process
    group is then SIGKILLed. With ``kill`` the whole group (worker, pool, beat) is SIGKILLed at
    once instead, skipping the seconds a warm shutdown takes: for a fixture torn down after its
    test has checked everything.

    On PostgreSQL the worker connects as the least-privilege ``custodian_executor`` role, as in
    production; on the embedded default (SQLite) it opens the test database file and uses the
    filesystem broker under ``CUSTODIAN_VAR_DIR``, polled every 0.1 s.
    """
    from django.core.management import call_command

    log_path = tmp_path / "worker.log"
    if connection.vendor == "sqlite":  # the embedded default: the test database file, the filesystem broker
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
        env |= {
            "DATABASE_URL": f"sqlite:///{connection.settings_dict['NAME']}",
            "CUSTODIAN_SWEEP_SECONDS": "1",
            # The filesystem broker is polled: every 0.1 s, not every 1 s, so a test that waits on
            # many nudges in a row is not paced by the default interval.
            "CUSTODIAN_BROKER_POLL_SECONDS": "0.1",
        }
        for folder in ("queue", "processed", "control"):
            (settings.VAR_DIR / "broker" / folder).mkdir(parents=True, exist_ok=True)
    else:
        call_command("setup_db_roles", verbosity=0)
        env = {
            **os.environ,
            "DATABASE_URL": test_database_url("custodian_executor"),
            "REDIS_URL": settings.CELERY_BROKER_URL,
            "CUSTODIAN_SWEEP_SECONDS": "1",
        }
    command = worker_command(
        name=f"test-{os.getpid()}-{time.monotonic_ns()}@%h",
        concurrency=concurrency,
        beat_schedule=tmp_path / "beat-schedule" if beat else None,
        queues=queues,
    )
    with open(log_path, "w") as log, open(stderr or os.devnull, "w") as errors:
        process = subprocess.Popen(
            command,
            cwd=BASE_DIR,
            env=env,
            stdout=log,
            stderr=errors if stderr else subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield process
    except BaseException:  # a failing test shows what its worker said (pytest prints captured output)
        print(f"--- {log_path} ---\n{log_path.read_text(errors='replace')[-20000:]}")
        raise
    finally:
        if not kill:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):  # killed below
                process.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):  # the group is gone already
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        if os.environ.get("CUSTODIAN_SHOW_WORKER_LOG"):
            print(log_path.read_text())


def wait_until(condition: Callable[[], bool], *, timeout: float = 60, what: str = "condition") -> None:
    """Poll ``condition`` until it holds; fail after ``timeout`` seconds (bounded, never hangs)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def broker_messages(queue: str = "executor") -> list[dict]:
    """The messages waiting in ``queue``, on Redis or on the embedded filesystem broker (newest first)."""
    if settings.CELERY_BROKER_URL.startswith("redis"):
        import redis

        client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
        return [json.loads(message) for message in client.lrange(queue, 0, -1)]
    folder = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_out"])
    files = sorted(folder.glob(f"*.{queue}.msg"), reverse=True)
    return [json.loads(path.read_bytes()) for path in files]


def empty_broker() -> None:
    """Drop every waiting message (Redis: the broker's database; filesystem: the queue folder)."""
    if settings.CELERY_BROKER_URL.startswith("redis"):
        import redis

        redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
        return
    folder = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_out"])
    folder.mkdir(parents=True, exist_ok=True)
    for path in folder.glob("*.msg"):
        path.unlink(missing_ok=True)
