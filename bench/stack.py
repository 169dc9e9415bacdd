"""The production-like stack the benchmark runs against.

gunicorn with several workers serves the API as the ``custodian_web`` role;
Celery executor workers (separate processes, one task at a time each) and
beat run as the ``custodian_executor`` role, exactly as in production. The
benchmark's own process (seeding, in-process page renders) uses the owner.
"""

import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import psycopg
from django.conf import settings

from executor.worker import worker_command

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def role_url(database_url: str, role: str) -> str:
    parts = urllib.parse.urlsplit(database_url)
    return parts._replace(netloc=f"{role}@{parts.netloc.rpartition('@')[2]}").geturl()


def recreate_database(database_url: str) -> None:
    """Drop and create the benchmark database, so every run starts from the same state."""
    parts = urllib.parse.urlsplit(database_url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def recreate_embedded(var_dir: Path) -> Path:
    """An empty var directory for the embedded default: a new SQLite file and filesystem broker."""
    shutil.rmtree(var_dir, ignore_errors=True)
    for folder in ("queue", "processed", "control"):
        (var_dir / "broker" / folder).mkdir(parents=True)
    return var_dir


class Stack:
    """Start and stop gunicorn, executor workers and beat; the caller owns the database."""

    def __init__(
        self,
        *,
        database_url: str,
        redis_url: str,
        log_dir: Path,
        port: int,
        web_workers: int,
        web_threads: int = 1,
    ):
        self.database_url, self.redis_url = database_url, redis_url
        self.log_dir, self.port, self.web_workers, self.web_threads = log_dir, port, web_workers, web_threads
        self.web: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self.beat: subprocess.Popen | None = None
        self.vectors: subprocess.Popen | None = None
        log_dir.mkdir(parents=True, exist_ok=True)

    def _spawn(self, name: str, command: list[str], role: str, **env: str) -> subprocess.Popen:
        services = {"DATABASE_URL": role_url(self.database_url, role), "REDIS_URL": self.redis_url}
        environment = {
            **os.environ,
            **(services if self.database_url else {}),  # else the embedded default (CUSTODIAN_VAR_DIR)
            "CUSTODIAN_SWEEP_SECONDS": "0.5",
            # The per-token rate limit is a policy, not a capacity: lift it to measure capacity.
            "CUSTODIAN_API_RATE": "100000/s",  # a one-second window keeps the history short
            **env,
        }
        log = open(self.log_dir / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        return subprocess.Popen(command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT)

    def start_web(self, **env: str) -> None:
        """Start gunicorn (``env``: settings for this start only, e.g. ``CUSTODIAN_OBSERVABILITY=off``)."""
        self.web = self._spawn(
            "gunicorn",
            [
                str(BIN / "gunicorn"),
                "--config=python:config.gunicorn",  # what `make run` serves with (bin/run-all)
                "config.wsgi",
                f"--workers={self.web_workers}",
                f"--threads={self.web_threads}",  # more than 1: threaded workers (gthread)
                f"--bind=127.0.0.1:{self.port}",
                "--backlog=256",
                "--log-level=warning",
            ],
            "custodian_web",
            **env,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/schema/", timeout=5).read()
                return
            except OSError:
                if self.web.poll() is not None:
                    raise RuntimeError(f"gunicorn exited; see {self.log_dir / 'gunicorn.log'}") from None
                time.sleep(0.2)
        raise RuntimeError("gunicorn did not answer within 60 s")

    def start_workers(self, count: int) -> None:
        """Start ``count`` executor worker processes (concurrency 1 each) and beat (the sweep)."""
        for n in range(count):
            self.workers.append(
                self._spawn(
                    f"worker-{n}",
                    worker_command(name=f"bench-{n}-{os.getpid()}@%h", concurrency=1),
                    "custodian_executor",
                )
            )
        if self.vectors is None and settings.CUSTODIAN_VECTORS == "queued":
            # Embedding yields the CPU to applies (nice): its vectors follow as the machine allows.
            name = f"bench-vectors-{os.getpid()}@%h"
            command = worker_command(name=name, concurrency=1, queues=("vectors",))
            self.vectors = self._spawn("vectors", ["nice", "-n", "19", *command], "custodian_executor")
        if self.beat is None:
            self.beat = self._spawn(
                "beat",
                [
                    str(BIN / "celery"),
                    "-A",
                    "config",
                    "beat",
                    "-l",
                    "WARNING",
                    "-s",
                    str(self.log_dir / "beat-schedule"),
                ],
                "custodian_executor",
            )

    def wait_until_workers_ready(self) -> None:
        for n in range(len(self.workers)):
            wait_for_log(self.log_dir / f"worker-{n}.log", " ready.")
        if self.vectors:
            wait_for_log(self.log_dir / "vectors.log", " ready.")

    def stop_workers(self) -> None:
        for process in [*self.workers, *(p for p in (self.beat, self.vectors) if p)]:
            _stop(process)
        self.workers, self.beat, self.vectors = [], None, None

    def stop_web(self) -> None:
        if self.web:
            _stop(self.web)
            self.web = None

    def stop(self) -> None:
        self.stop_workers()
        self.stop_web()

    def __enter__(self) -> "Stack":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_for_log(path: Path, text: str, timeout: float = 60) -> None:
    """Wait until ``text`` appears in a process's log (e.g. a Celery worker's "ready.")."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{text!r} did not appear in {path} within {timeout} s")
