"""Start-up with a mistyped or unreachable dependency: one line naming it, never a traceback.

Run as a process starts (``manage.py``, the Celery app, the WSGI app), in both modes.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLOSED = "127.0.0.1:1"


def run(*command: str, **environ: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **environ}
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def manage(*args: str, **environ: str) -> subprocess.CompletedProcess[str]:
    return run(sys.executable, "manage.py", *args, **environ)


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        (
            "DATABASE_URL",
            "mysqll://db/custodian",
            "DATABASE_URL has 'mysqll://'; it must start with postgres://",
        ),
        ("DATABASE_URL", "127.0.0.1:5432/custodian", "DATABASE_URL has no scheme"),
        ("DATABASE_URL", "postgres://db:port/custodian", "DATABASE_URL is not a valid URL"),
        ("REDIS_URL", "htp://127.0.0.1:6379/0", "REDIS_URL has 'htp://'; it must start with redis://"),
        ("CACHE_URL", "redis://", "CACHE_URL names no server"),
    ],
)
def test_a_mistyped_url_stops_every_entry_point_with_one_line(name, value, said):
    for entry in (
        [sys.executable, "manage.py", "check"],
        [sys.executable, "-c", "import config.wsgi"],
        [sys.executable, "-c", "import config.celery"],
    ):
        done = run(*entry, **{name: value})
        assert done.returncode == 2, (entry, done.stderr)
        assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr  # one line
        assert done.stderr.startswith(f"custodian: {said}"), done.stderr
        assert "Traceback" not in done.stderr


def test_preflight_names_each_unreachable_dependency_without_its_password():
    done = manage(
        "preflight",
        DATABASE_URL=f"postgres://custodian:s3cret@{CLOSED}/custodian",
        REDIS_URL=f"redis://:s3cret@{CLOSED}/0",
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    named = [line.split(" at ")[0].removeprefix("custodian: ") for line in lines]
    assert named == ["database", "broker", "cache"]
    assert all(f"at {CLOSED} does not answer" in line for line in lines), lines
    assert "s3cret" not in done.stderr and "Traceback" not in done.stderr


def test_preflight_waits_a_bounded_time_then_gives_up():
    done = manage("preflight", "--wait", "2", REDIS_URL=f"redis://{CLOSED}/0")
    assert done.returncode == 1
    assert "custodian: broker at 127.0.0.1:1 does not answer" in done.stderr


def test_preflight_passes_where_the_dependencies_answer():
    done = manage("preflight")  # this run's own database and broker (either mode)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "custodian: database, broker and cache answer"


def under_gunicorn_settings(show: str, database_url: str) -> subprocess.CompletedProcess[str]:
    """Run ``show`` after ``config.gunicorn`` as a web worker loads it, without an inherited budget."""
    env = {k: v for k, v in os.environ.items() if k != "CUSTODIAN_STATEMENT_TIMEOUT_MS"}
    env["DATABASE_URL"] = database_url
    return subprocess.run(
        [sys.executable, "-c", f"import config.gunicorn, django; django.setup(); {show}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_start_up_checks_leave_gunicorn_setting_the_web_statement_budget_first():
    """gunicorn imports the ``config`` package (the Celery app) before ``config.gunicorn`` sets it."""
    done = under_gunicorn_settings(
        "from django.conf import settings; print(settings.DATABASES['default']['OPTIONS'].get('options'))",
        "postgres://custodian@127.0.0.1:5432/custodian",  # parsed, never connected
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "-c statement_timeout=5000"


def test_a_sqlite_database_url_under_gunicorn_gets_no_postgresql_options():
    done = under_gunicorn_settings(
        "from django.db import connection; connection.cursor().execute('SELECT 1'); "
        "print(connection.settings_dict['OPTIONS'])",
        "sqlite:///:memory:",
    )
    assert done.returncode == 0, done.stderr
    assert "statement_timeout" not in done.stdout


_HOLDS_THE_WRITE_LOCK = """
import sqlite3
from django.db import connection, transaction
with transaction.atomic():
    connection.cursor().execute('SELECT 1')  # a read only, yet the write lock is taken at BEGIN
    other = sqlite3.connect(connection.settings_dict['NAME'], timeout=0)
    try:
        other.execute('BEGIN IMMEDIATE')
        print('free')
    except sqlite3.OperationalError as exc:
        print(exc)
print(connection.settings_dict['OPTIONS']['timeout'])
"""


def test_a_sqlite_database_url_queues_writers_as_the_embedded_default_does(tmp_path):
    """Web and worker on one ``sqlite://`` file wait for the write lock instead of failing at once."""
    done = under_gunicorn_settings(_HOLDS_THE_WRITE_LOCK, f"sqlite:///{tmp_path / 'one.sqlite3'}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["database", "is", "locked", "30"]
