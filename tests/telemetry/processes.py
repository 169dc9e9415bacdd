"""A real web server (gunicorn, as production serves) against the test database, its stderr kept."""

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
from django.db import connection

from tests.workers import BASE_DIR, test_database_url, wait_until


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _web_env() -> dict[str, str]:
    """The environment of the test run, pointed at its database (as ``custodian_web`` on PostgreSQL)."""
    if connection.vendor == "sqlite":
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL", "CACHE_URL")}
        # No statement budget: SQLite has no statement_timeout (gunicorn's config sets one otherwise).
        return env | {
            "DATABASE_URL": f"sqlite:///{connection.settings_dict['NAME']}",
            "CUSTODIAN_STATEMENT_TIMEOUT_MS": "0",
        }
    return {**os.environ, "DATABASE_URL": test_database_url("custodian_web")}


@contextlib.contextmanager
def web_server(log_path: Path) -> Iterator[str]:
    """Run gunicorn with one worker on a free port; yield its base URL; its output goes to ``log_path``."""
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "--config=python:config.gunicorn",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        "1",
        "config.wsgi",
    ]
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            command, cwd=BASE_DIR, env=_web_env(), stdout=log, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _answers(url, process), timeout=60, what="the web server to answer")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _answers(url: str, process: subprocess.Popen) -> bool:
    if process.poll() is not None:
        raise AssertionError(f"the web server exited with {process.returncode}")
    try:
        return httpx.get(f"{url}/livez", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False
