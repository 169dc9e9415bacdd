"""Multiprocess mode: gunicorn's workers and a Celery executor worker write to one directory,
and any web worker's /metrics adds up every process's counts.

Real processes on the test database (SQLite file, or PostgreSQL as the least-privilege roles):
gunicorn with ``config/gunicorn.py`` (two workers) and ``celery worker``, both given the same
``PROMETHEUS_MULTIPROC_DIR``.
"""

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.db import connection

from executor.models import Receipt
from tests.factories import create_payload, make_evidence, user_preference
from tests.metrics.scraping import METRICS_TOKEN, Scrape, bearer, parse
from tests.workers import BASE_DIR, celery_worker, empty_broker, wait_until
from tests.workers import test_database_url as database_url

pytestmark = pytest.mark.django_db(transaction=True)

SUBMITS = 4
PID_OF_FILE = re.compile(r"_(\d+)\.db$")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _web_env(directory: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    if connection.vendor == "sqlite":
        # The test database file; statement budgets are PostgreSQL's (config/gunicorn.py sets one).
        env |= {
            "DATABASE_URL": f"sqlite:///{connection.settings_dict['NAME']}",
            "CUSTODIAN_STATEMENT_TIMEOUT_MS": "0",
        }
    else:
        env |= {"DATABASE_URL": database_url("custodian_web"), "REDIS_URL": settings.CELERY_BROKER_URL}
    return env | {
        "PROMETHEUS_MULTIPROC_DIR": str(directory),
        "CUSTODIAN_METRICS_TOKEN": METRICS_TOKEN,
        "CUSTODIAN_API_RATE": "100000/min",
    }


@contextlib.contextmanager
def gunicorn(directory: Path, log: Path) -> Iterator[tuple[subprocess.Popen, str]]:
    """gunicorn as bin/run-all starts it, two workers; yield it and its base URL."""
    port = _free_port()
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "--config=python:config.gunicorn",
        "config.wsgi",
        "--workers=2",
        f"--bind=127.0.0.1:{port}",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=BASE_DIR, env=_web_env(directory), stdout=out, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _answers(base) or process.poll() is not None, timeout=90, what="gunicorn")
        assert process.poll() is None, log.read_text()
        yield process, base
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _answers(base: str) -> bool:
    try:
        return httpx.get(f"{base}/livez", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def scrape(base: str) -> Scrape:
    response = httpx.get(f"{base}/metrics", headers=bearer(), timeout=30)
    assert response.status_code == 200, response.text
    return parse(response.text)


def _worker_pids(web: subprocess.Popen) -> set[int]:
    children = Path(f"/proc/{web.pid}/task/{web.pid}/children").read_text().split()
    return {int(pid) for pid in children}


def _file_pids(directory: Path) -> set[int]:
    return {int(match.group(1)) for path in directory.iterdir() if (match := PID_OF_FILE.search(path.name))}


def test_counts_from_web_workers_and_the_executor_add_up_in_one_scrape(agent, tmp_path, monkeypatch):
    directory = tmp_path / "prometheus"
    directory.mkdir()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(directory))  # the worker inherits it
    empty_broker()
    with gunicorn(directory, tmp_path / "gunicorn.log") as (web, base), celery_worker(tmp_path, beat=True):
        ids = []
        for n in range(SUBMITS):
            payload = create_payload(
                user_preference(content={"statement": f"Alice prefers summaries, take {n}"}),
                [make_evidence(agent.agent)],
            )
            answer = httpx.post(
                f"{base}/api/v1/proposals/",
                json=payload,
                headers={**bearer(agent.token), "Idempotency-Key": f"mp-{n}"},
                timeout=30,
            )
            assert answer.status_code == 201, answer.text
            ids.append(answer.json()["id"])
        # Generous: on the embedded broker a loaded two-core machine took over a minute.
        wait_until(
            lambda: Receipt.objects.filter(proposal_id__in=ids).count() == SUBMITS,
            timeout=180,
            what="receipts",
        )
        wait_until(
            lambda: scrape(base).value("custodian_receipts_total", outcome="applied") == SUBMITS,
            timeout=180,
            what="the executor's counts in the scrape",
        )
        found = scrape(base)
        web_pids = _worker_pids(web)
        writers = _file_pids(directory)

    submit = {"route": "/api/v1/proposals/", "method": "POST", "status": "201"}
    assert found.value("custodian_http_request_duration_seconds_count", **submit) == SUBMITS
    submitted = found.matching("custodian_proposals_submitted_total", classification="auto_apply")
    assert sum(value for _, value in submitted) == SUBMITS
    applied = [value for _, value in found.matching("custodian_apply_duration_seconds_count")]
    assert sum(applied) >= 1  # a batch may apply several entries at once
    assert found.value("custodian_http_requests_in_progress") == 1  # the scrape itself
    assert writers & web_pids, "a web worker wrote files"
    assert writers - web_pids, "another process (the executor's) wrote files too"


def test_a_dead_web_workers_live_gauge_is_retired_and_its_counts_kept(tmp_path):
    directory = tmp_path / "prometheus"
    directory.mkdir()
    with gunicorn(directory, tmp_path / "gunicorn.log") as (web, base):
        for _ in range(6):
            assert httpx.get(f"{base}/livez", timeout=30).status_code == 200
        before = scrape(base)
        live = {pid for pid in _file_pids(directory) if (directory / f"gauge_livesum_{pid}.db").exists()}
        victim = sorted(live & _worker_pids(web))[0]
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: not (directory / f"gauge_livesum_{victim}.db").exists(), what="child_exit")
        after = scrape(base)

    livez = {"route": "/livez", "method": "GET", "status": "200"}
    counted = "custodian_http_request_duration_seconds_count"
    assert before.value(counted, **livez) >= 6  # and the start-up wait's
    assert after.value(counted, **livez) == before.value(counted, **livez)  # the dead worker's still count
    assert after.value("custodian_http_requests_in_progress") == 1
