"""Throwaway PostgreSQL, Redis, Celery workers and a web server for the fault-injection tests.

Everything here runs as a subprocess in its own session (``start_new_session``)
so a test can SIGKILL a whole process group, and listens on a free loopback
port, never on the machine's shared services (5432 / 6379).

PostgreSQL refuses to ``initdb`` as root: when the tests run as root, the
cluster directory is chowned to the ``postgres`` user and ``initdb`` /
``pg_ctl`` run through ``runuser -u postgres --``. The cluster runs with
``fsync=off`` (it is thrown away; ``pg_ctl stop -m fast`` is still a clean
shutdown, so nothing a test checks depends on fsync).

As in production (``bin/run-all``), migrations run as the owner, then
``manage.py setup_db_roles``; workers connect as ``custodian_executor``, the
web server and the arrange helpers (``tests/faults/helper.py``) as
``custodian_web``; ``verify_receipts`` runs as the owner.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from executor.worker import worker_command

BASE_DIR = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
WEB_ROLE, EXECUTOR_ROLE = "custodian_web", "custodian_executor"
OWNER_STEPS = {"poison", "set-confidence"}  # helper commands run as the owner (see Stack.helper)
SCALE = os.environ.get("CUSTODIAN_FAULT_SCALE", "ci")
if SCALE not in ("ci", "full"):
    raise RuntimeError(f"CUSTODIAN_FAULT_SCALE must be 'ci' or 'full', not {SCALE!r}")


def scaled(ci: Any, full: Any) -> Any:
    return full if SCALE == "full" else ci


def pg_bin_dir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` with ``initdb`` (or ``CUSTODIAN_PG_BIN``)."""
    if os.environ.get("CUSTODIAN_PG_BIN"):
        return Path(os.environ["CUSTODIAN_PG_BIN"])
    found = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")]
    found.sort(key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    return found[-1] if found else None


def missing_tools() -> str:
    """Why these tests cannot run here ('' when they can)."""
    if pg_bin_dir() is None:
        return "PostgreSQL server binaries (initdb, pg_ctl) not found under /usr/lib/postgresql/*/bin"
    if shutil.which("redis-server") is None:
        return "redis-server not found"
    if os.geteuid() == 0 and (shutil.which("runuser") is None or not _user_exists("postgres")):
        return "running as root needs runuser and a 'postgres' user to run initdb"
    return ""


def _user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(condition: Callable[[], Any], *, timeout: float, what: str, interval: float = 0.1) -> Any:
    """Poll ``condition`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def log_tail(path: Path, lines: int = 60) -> str:
    if not path.exists():
        return f"({path.name}: no log)"
    text = path.read_text(errors="replace").splitlines()
    return f"--- {path.name} (last {min(lines, len(text))} of {len(text)} lines) ---\n" + "\n".join(
        text[-lines:]
    )


def log_lines(path: Path, markers: tuple[str, ...], limit: int = 80) -> str:
    """The first ``limit`` lines of ``path`` holding any of ``markers`` (the errors a tail scrolls past)."""
    if not path.exists():
        return f"({path.name}: no log)"
    lines = path.read_text(errors="replace").splitlines()
    found = [line for line in lines if any(marker in line for marker in markers)]
    return f"--- {path.name}: {len(found)} lines with {', '.join(markers)} (first {limit}) ---\n" + "\n".join(
        found[:limit]
    )


class Process:
    """A subprocess in its own session, logging to a file; stopped by process group."""

    def __init__(
        self, name: str, command: list[str], *, env: dict[str, str], log: Path, cwd: Path = BASE_DIR
    ):
        self.name, self.command, self.env, self.log, self.cwd = name, command, env, log, cwd
        self.popen: subprocess.Popen | None = None

    def start(self) -> Process:
        with open(self.log, "a") as log:
            log.write(f"\n===== start {self.name} at {time.strftime('%H:%M:%S')} =====\n")
            log.flush()
            self.popen = subprocess.Popen(
                self.command,
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    @property
    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL the whole process group, at once, no goodbye."""
        self._signal_group(signal.SIGKILL)
        if self.popen is not None:
            self.popen.wait(timeout=30)
        self._reap_group()

    def stop(self, timeout: float = 20) -> None:
        """SIGTERM the process group (warm shutdown), SIGKILL whatever is left after ``timeout``."""
        if self.popen is None:
            return
        self._signal_group(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=timeout)
        self._signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=10)
        self._reap_group()

    def _signal_group(self, sig: int) -> None:
        if self.popen is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    def _reap_group(self) -> None:
        """Wait (bounded) until no process of the group is left, so ports and locks are free."""
        if self.popen is None:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(self.popen.pid, 0)
            except (ProcessLookupError, PermissionError):
                return
            time.sleep(0.05)


class Postgres:
    """A PostgreSQL cluster of its own, in ``root/pg``, on a free loopback port."""

    def __init__(self, root: Path):
        self.bin = pg_bin_dir()
        self.dir = root / "pg"
        self.data = self.dir / "data"
        self.logfile = self.dir / "postgres.log"
        self.port = free_port()
        self.dbname = "custodian"
        self.as_postgres = os.geteuid() == 0

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{self.dbname}"

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout,
            start_new_session=True,  # the postmaster must not share our session or terminal
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"{' '.join(args)} failed ({result.returncode}): {result.stderr}{result.stdout}"
            )
        return result

    def init(self) -> Postgres:
        self.dir.mkdir(mode=0o700)
        if self.as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")
        self.start()
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", self.dbname)
        return self

    def start(self) -> None:
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} -c fsync=off "
            "-c full_page_writes=off -c max_connections=100"
        )
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.logfile), "-w", "-t", "60", "-o", options, "start"
        )

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    @property
    def is_running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def destroy(self) -> None:
        if self.data.exists() and self.is_running:
            try:
                self.stop("immediate")
            except (RuntimeError, subprocess.TimeoutExpired):
                pid = int((self.data / "postmaster.pid").read_text().split()[0])
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(
            host="127.0.0.1",
            port=self.port,
            user="postgres",
            dbname=self.dbname,
            autocommit=True,
            connect_timeout=5,
        )


class Redis:
    """A Redis of its own, nothing persisted: a restart comes back empty."""

    def __init__(self, root: Path):
        self.root = root
        self.port = free_port()
        self.process = Process(
            "redis",
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--dir",
                str(root),
            ],
            env=dict(os.environ),
            log=root / "redis.log",
        )

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self):
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=2, socket_timeout=5)

    def start(self) -> Redis:
        self.process.start()
        wait_until(self._pong, timeout=20, what="redis to answer PING")
        return self

    def _pong(self) -> bool:
        try:
            return bool(self.client().ping())
        except Exception:
            return False

    def kill(self) -> None:
        self.process.kill()

    def queue_length(self, queue: str = "executor") -> int:
        return int(self.client().llen(queue))


class Stack:
    """One test's world: its tmp dir, PostgreSQL, Redis and every process it starts."""

    def __init__(
        self, root: Path, *, max_attempts: int = 25, lease_seconds: int = 5, executor_batch: int = 100
    ):
        self.root = root
        self.executor_batch = executor_batch
        self.pg = Postgres(root)
        self.redis = Redis(root)
        self.processes: list[Process] = []
        self.max_attempts = max_attempts
        self.lease_seconds = lease_seconds
        self._worker_count = 0
        self._db: psycopg.Connection | None = None

    # --- environment and helper scripts -------------------------------------------------------------
    def database_url(self, role: str | None = None) -> str:
        """The throwaway database's URL, as ``role`` (see ``manage.py setup_db_roles``) or as the owner."""
        return self.pg.url.replace("postgres://postgres@", f"postgres://{role}@") if role else self.pg.url

    def env(self, role: str | None = None, **extra: str) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("CUSTODIAN_", "DJANGO_", "CELERY_"))
            and key not in ("DATABASE_URL", "REDIS_URL", "CACHE_URL")
        }
        env.update(
            DJANGO_SETTINGS_MODULE="config.settings",
            DATABASE_URL=self.database_url(role),
            REDIS_URL=self.redis.url,
            CUSTODIAN_VAR_DIR=str(self.root / "var"),
            CUSTODIAN_SWEEP_SECONDS="1",
            CUSTODIAN_OUTBOX_LEASE_SECONDS=str(self.lease_seconds),
            CUSTODIAN_OUTBOX_MAX_ATTEMPTS=str(self.max_attempts),
            CUSTODIAN_EXECUTOR_BATCH=str(self.executor_batch),
            PYTHONUNBUFFERED="1",
            PYTHONDONTWRITEBYTECODE="1",
        )
        env.update(extra)
        return env

    def manage(self, *args: str, timeout: float = 180, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [PYTHON, "manage.py", *args],
            cwd=BASE_DIR,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            start_new_session=True,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"manage.py {' '.join(args)} exited {result.returncode}:\n{result.stderr}")
        return result

    def helper(self, *args: str, timeout: float = 600, expect_exit: int = 0) -> dict:
        """Run ``tests/faults/helper.py`` against this stack; return its JSON answer (last stdout line).

        It runs as the web role, except the operator's steps that rewrite outbox digests to plant or
        cure a poison entry: the web role may not update outbox entries, so those run as the owner.
        """
        result = subprocess.run(
            [PYTHON, "-m", "tests.faults.helper", *args],
            cwd=BASE_DIR,
            env=self.env(None if args[0] in OWNER_STEPS else WEB_ROLE),
            capture_output=True,
            text=True,
            timeout=timeout,
            start_new_session=True,
            check=False,
        )
        if result.returncode != expect_exit:
            raise AssertionError(
                f"helper {' '.join(args)} exited {result.returncode} (expected {expect_exit}):\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
            )
        lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
        return json.loads(lines[-1]) if lines else {}

    # --- lifecycle ----------------------------------------------------------------------------------------
    def up(self) -> Stack:
        started = time.monotonic()
        self.pg.init()
        self.redis.start()
        self.processes.append(self.redis.process)
        self.manage("migrate", "--noinput")
        self.manage("setup_db_roles")  # web and executor connect as their least-privilege roles
        ready = time.monotonic() - started
        print(f"[faults] postgres :{self.pg.port}, redis :{self.redis.port}, ready in {ready:.1f}s")
        return self

    def worker(self, *, beat: bool = True, concurrency: int = 2) -> Process:
        """A real ``celery -A config worker -Q executor`` (with embedded beat by default), started."""
        self._worker_count += 1
        n = self._worker_count
        command = worker_command(
            name=f"faults-{os.getpid()}-{n}@%h",
            concurrency=concurrency,
            beat_schedule=self.root / "beat-schedule" if beat else None,
        )
        process = Process(f"worker-{n}", command, env=self.env(EXECUTOR_ROLE), log=self.root / "worker.log")
        self.processes.append(process)
        return process.start()

    def web(self) -> tuple[Process, int]:
        port = free_port()
        process = Process(
            "web",
            [PYTHON, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            env=self.env(WEB_ROLE),
            log=self.root / "web.log",
        )
        self.processes.append(process)
        process.start()
        return process, port

    def down(self) -> None:
        if self._db is not None:
            with contextlib.suppress(Exception):
                self._db.close()
        for process in reversed(self.processes):
            process.stop(timeout=10)
        self.pg.destroy()

    def log_count(self, name: str, text: str) -> int:
        path = self.root / name
        return path.read_text(errors="replace").count(text) if path.exists() else 0

    def last_traceback(self, name: str, frames: int = 6) -> str:
        """The last traceback in a log, shortened to its last frames and the exception line."""
        path = self.root / name
        lines = path.read_text(errors="replace").splitlines() if path.exists() else []
        starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
        if not starts:
            return f"(no traceback in {name})"
        block = lines[starts[-1] :]
        end = next(
            (i for i, line in enumerate(block[1:], 1) if line and not line.startswith(" ")), len(block) - 1
        )
        files = [line.strip() for line in block[:end] if line.strip().startswith("File ")]
        # Frames of the project itself and of the libraries it calls directly, then the innermost ones.
        own = [
            f for f in files if "/.venv/" not in f or "rest_framework/throttling" in f or "core/cache" in f
        ]
        picked = [f for f in files if f in own[-frames:] or f in files[-2:]]
        return " | ".join([*picked, block[end].strip()])

    def logs(self) -> str:
        names = ["worker.log", "web.log", "redis.log"]
        return "\n".join(
            [
                self.database_state(),
                log_lines(self.root / "worker.log", ("WARNING", "ERROR", "Traceback", "Error:")),
                *(log_tail(self.root / name) for name in names),
                log_tail(self.pg.logfile, 30),
            ]
        )

    def database_state(self) -> str:
        """The sessions, their locks and the outbox by state: what a stalled drain is waiting on."""
        queries = {
            "sessions": "SELECT pid, usename, state, backend_start, xact_start, wait_event_type, wait_event,"
            " left(query, 120) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()",
            "blocked by": "SELECT pid, pg_blocking_pids(pid) FROM pg_stat_activity"
            " WHERE cardinality(pg_blocking_pids(pid)) > 0",
            "outbox": "SELECT status, lease_holder_pid, lease_holder_started_at, count(*), max(attempts),"
            " min(available_at) FROM proposals_outboxentry GROUP BY 1, 2, 3 ORDER BY 1, 2",
        }
        lines = ["--- database state ---"]
        for name, sql in queries.items():
            try:
                lines += [f"{name}:", *(f"  {row}" for row in self.rows(sql))]
            except psycopg.Error as exc:
                lines.append(f"{name}: unavailable ({exc})")
        return "\n".join(lines)

    # --- reading the database -------------------------------------------------------------------------
    def db(self) -> psycopg.Connection:
        if self._db is None or self._db.closed or self._db.broken:
            self._db = self.pg.connect()
        return self._db

    def scalar(self, sql: str, params: tuple = ()) -> Any:
        return self.db().execute(sql, params).fetchone()[0]

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        return self.db().execute(sql, params).fetchall()

    def scalar_or_none(self, sql: str, params: tuple = ()) -> Any:
        """``scalar``, but None while the database is unreachable (it may be restarting)."""
        for _ in range(2):  # a connection from before a restart fails once; then reconnect
            try:
                return self.scalar(sql, params)
            except psycopg.OperationalError:
                with contextlib.suppress(Exception):
                    self._db.close()
                self._db = None
        return None

    def receipts(self) -> int:
        return self.scalar_or_none("SELECT count(*) FROM executor_receipt") or 0

    def wait_for_receipts(self, count: int, *, timeout: float) -> None:
        wait_until(lambda: self.receipts() >= count, timeout=timeout, what=f"{count} receipts", interval=0.25)

    def clock(self) -> Any:
        """The database's clock now (receipts are stamped with it): the moment something came back."""
        return wait_until(
            lambda: self.scalar_or_none("SELECT clock_timestamp()"), timeout=60, what="the database clock"
        )

    def wait_for_entries(self, entry_ids: list[str], *, timeout: float, what: str) -> None:
        """Wait until every one of ``entry_ids`` is done (bounded)."""

        def left() -> bool:
            count = self.scalar_or_none(
                "SELECT count(*) FROM proposals_outboxentry WHERE id::text = ANY(%s) AND status <> 'done'",
                (entry_ids,),
            )
            return count == 0

        wait_until(left, timeout=timeout, interval=0.1, what=what)

    def receipt_lags(self, entry_ids: list[str], since: Any, until: Any = None) -> list[float]:
        """Seconds from ``since`` (a database clock reading) to each entry's receipt written after it
        (and before ``until``, when given)."""
        rows = self.rows(
            "SELECT extract(epoch FROM r.created_at - %s) FROM executor_receipt r"
            " WHERE r.outbox_entry_id::text = ANY(%s) AND r.created_at >= %s"
            " AND (%s::timestamptz IS NULL OR r.created_at < %s::timestamptz)",
            (since, entry_ids, since, until, until),
        )
        return [float(lag) for (lag,) in rows]

    def verify_receipts(self) -> str:
        result = self.manage("verify_receipts", check=False)
        assert result.returncode == 0, f"verify_receipts exited {result.returncode}:\n{result.stderr}"
        return result.stdout.strip()


def assert_applied_exactly_once(
    stack: Stack, *, expected: int, ignore_proposals: tuple[str, ...] = ()
) -> dict:
    """The invariants after a fault: every released proposal applied once, nothing lost, nothing twice.

    Returns a few numbers for the test output.
    """
    skip = list(ignore_proposals) or ["00000000-0000-0000-0000-000000000000"]
    q = stack.rows
    statuses = dict(
        q("SELECT status, count(*) FROM proposals_proposal WHERE NOT id::text = ANY(%s) GROUP BY 1", (skip,))
    )
    assert statuses == {"applied": expected}, f"proposal statuses {statuses}, expected {expected} applied"
    entries = dict(
        q(
            "SELECT status, count(*) FROM proposals_outboxentry"
            " WHERE NOT proposal_id::text = ANY(%s) GROUP BY 1",
            (skip,),
        )
    )
    assert entries == {"done": expected}, f"outbox entry statuses {entries}"
    not_one_entry = q(
        "SELECT p.id, count(e.id) FROM proposals_proposal p"
        " LEFT JOIN proposals_outboxentry e ON e.proposal_id = p.id"
        " WHERE NOT p.id::text = ANY(%s) GROUP BY p.id HAVING count(e.id) <> 1",
        (skip,),
    )
    assert not not_one_entry, f"proposals without exactly one outbox entry: {not_one_entry[:5]}"
    without_receipt = q(
        "SELECT e.id FROM proposals_outboxentry e LEFT JOIN executor_receipt r ON r.outbox_entry_id = e.id"
        " WHERE r.id IS NULL AND NOT e.proposal_id::text = ANY(%s)",
        (skip,),
    )
    assert not without_receipt, (
        f"{len(without_receipt)} outbox entries have no receipt: {without_receipt[:5]}"
    )
    receipts_per_proposal = q(
        "SELECT proposal_id, count(*), array_agg(outcome) FROM executor_receipt"
        " WHERE NOT proposal_id::text = ANY(%s) GROUP BY 1"
        " HAVING count(*) <> 1 OR bool_or(outcome <> 'applied')",
        (skip,),
    )
    assert not receipts_per_proposal, (
        f"proposals without exactly one applied receipt: {receipts_per_proposal[:5]}"
    )
    receipts = stack.scalar(
        "SELECT count(*) FROM executor_receipt WHERE NOT proposal_id::text = ANY(%s)", (skip,)
    )
    assert receipts == expected, f"{receipts} receipts for {expected} proposals"
    missing_memory = q(
        "SELECT p.id FROM proposals_proposal p LEFT JOIN memory_core_memory m ON m.id = p.target_memory_id"
        " WHERE m.id IS NULL AND NOT p.id::text = ANY(%s)",
        (skip,),
    )
    assert not missing_memory, f"{len(missing_memory)} applied proposals have no memory: {missing_memory[:5]}"
    memories = dict(
        q(
            "SELECT m.revision, count(*) FROM memory_core_memory m JOIN proposals_proposal p"
            " ON p.target_memory_id = m.id WHERE NOT p.id::text = ANY(%s) GROUP BY 1",
            (skip,),
        )
    )
    assert memories == {1: expected}, f"memory revisions {memories}: something applied twice (or lost)"
    orphans = stack.scalar(
        "SELECT count(*) FROM memory_core_memory m WHERE NOT EXISTS"
        " (SELECT 1 FROM proposals_proposal p WHERE p.target_memory_id = m.id)"
    )
    assert orphans == 0, f"{orphans} memories exist without a proposal"
    history = q("SELECT id, count(*) FROM memory_core_historicalmemory GROUP BY 1 HAVING count(*) <> 1")
    assert not history, f"memories with more than one history row: {history[:5]}"
    history_rows = stack.scalar(
        "SELECT count(*) FROM memory_core_historicalmemory h JOIN proposals_proposal p"
        " ON p.target_memory_id = h.id WHERE NOT p.id::text = ANY(%s)",
        (skip,),
    )
    assert history_rows == expected, f"{history_rows} memory history rows for {expected} memories"
    retried = stack.scalar("SELECT count(*) FROM proposals_outboxentry WHERE attempts > 1")
    max_attempts = stack.scalar("SELECT coalesce(max(attempts), 0) FROM proposals_outboxentry")
    return {"retried_entries": retried, "max_attempts": max_attempts}


def lag_summary(lags: list[float]) -> str:
    """p50 / p99 / max of recovery lags, for the test output."""
    if not lags:
        return "no entries"
    ordered = sorted(lags)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return f"{len(ordered)} entries, p50 {at(0.5):.1f}s, p99 {at(0.99):.1f}s, max {ordered[-1]:.1f}s"


def http(
    port: int, method: str, path: str, *, token: str, body: dict | None = None, headers: dict | None = None
):
    """One request to the throwaway web server; return (status, content type, parsed JSON or text)."""
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, content_type, raw = (
                response.status,
                response.headers.get("Content-Type", ""),
                response.read(),
            )
    except urllib.error.HTTPError as error:
        status, content_type, raw = error.code, error.headers.get("Content-Type", ""), error.read()
    text = raw.decode(errors="replace")
    try:
        return status, content_type, json.loads(text)
    except ValueError:
        return status, content_type, text
