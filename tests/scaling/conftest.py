"""Servers the scaling tests start once per test run: a streaming standby of the primary and a PgBouncer.

PostgreSQL mode only. The standby is a base backup of the primary cluster (``pg_basebackup -R``)
in a temporary directory, started on a free port as the ``postgres`` OS user; PgBouncer runs in
transaction mode in front of the primary. The primary must accept replication connections from
127.0.0.1 (.ci/run adds the pg_hba line) and Debian's ``pgbouncer`` must be installed; when
either is missing the tests fail under ``CUSTODIAN_REQUIRE_SERVICES=1`` and skip otherwise.
"""

import contextlib
import csv
import io
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from django.db import connection, connections

from core import replica
from core.databases import REPLICA, primary_database, replica_database
from tests.conftest import REQUIRE_SERVICES
from tests.faults.harness import free_port
from tests.live import executor  # noqa: F401 (a fixture the scaling tests use)
from tests.workers import connect_as, wait_until

REPLAY_WAIT_SECONDS = 120
# The statement budget PgBouncer gives every server connection of the test database
# (config/gunicorn.py's default), as docs/operations.md tells operators to.
POOLED_STATEMENT_TIMEOUT_MS = 5000


def unavailable(reason: str) -> None:
    """Fail under CUSTODIAN_REQUIRE_SERVICES=1, else skip: a server these tests need cannot start."""
    if REQUIRE_SERVICES:
        pytest.fail(f"required service missing: {reason}")
    pytest.skip(reason)


def _require_postgresql() -> None:
    if connection.vendor != "postgresql":
        unavailable("the scaling tests need PostgreSQL (DATABASE_URL)")


def _as_postgres(command: list[str]) -> list[str]:
    """PostgreSQL's servers refuse to run as root: run them as the postgres OS user."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _primary(sql: str) -> str:
    with connect_as() as conn:
        return str(conn.execute(sql).fetchone()[0])


def server_bin(name: str) -> str:
    major = int(_primary("SHOW server_version_num")) // 10000
    path = Path(f"/usr/lib/postgresql/{major}/bin/{name}")
    if not path.exists():
        unavailable(f"{path} is not installed")
    return str(path)


def _owned_directory(prefix: str) -> Path:
    """A fresh directory the postgres OS user owns (pytest's own tmp dirs are root's, mode 0700)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    if os.geteuid() == 0:
        shutil.chown(path, "postgres", "postgres")
    return path


@dataclass
class Standby:
    """A hot standby streaming from the primary, on 127.0.0.1:``port``."""

    port: int
    data: Path
    pg_ctl: str

    def connect(self) -> psycopg.Connection:
        db = connection.settings_dict
        return psycopg.connect(
            host="127.0.0.1", port=self.port, dbname=db["NAME"], user="postgres", autocommit=True
        )

    def url(self) -> str:
        db = connection.settings_dict
        return f"postgres://postgres@127.0.0.1:{self.port}/{db['NAME']}"

    def wait_for_replay(self) -> None:
        """Wait (bounded) until the standby has replayed everything the primary has written so far."""
        target = _primary("SELECT pg_current_wal_lsn()")

        def replayed() -> bool:
            with contextlib.suppress(psycopg.OperationalError), self.connect() as conn:
                return bool(
                    conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [target]).fetchone()[0]
                )
            return False

        wait_until(replayed, timeout=REPLAY_WAIT_SECONDS, what=f"the standby to replay up to {target}")

    def pause_replay(self) -> None:
        with self.connect() as conn:
            conn.execute("SELECT pg_wal_replay_pause()")

    def resume_replay(self) -> None:
        with self.connect() as conn:
            conn.execute("SELECT pg_wal_replay_resume()")

    def pg_ctl_run(self, *args: str) -> None:
        subprocess.run(
            _as_postgres([self.pg_ctl, "-D", str(self.data), *args]),
            check=True,
            capture_output=True,
            timeout=180,
        )

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.data}"
        self.pg_ctl_run("-o", options, "-l", str(self.data / "standby.log"), "-w", "-t", "120", "start")

    def stop(self) -> None:
        self.pg_ctl_run("-m", "fast", "-w", "-t", "60", "stop")


def _replication_allowed() -> bool:
    return (
        _primary(
            "SELECT count(*) FROM pg_hba_file_rules WHERE 'replication' = ANY(database)"
            " AND address = '127.0.0.1' AND auth_method = 'trust'"
        )
        != "0"
    )


# Settings a hot standby must hold at least as high as its primary.
_AT_LEAST_PRIMARY = (
    "max_connections",
    "max_worker_processes",
    "max_wal_senders",
    "max_prepared_transactions",
    "max_locks_per_transaction",
)


def _standby_conf(data: Path) -> None:
    """Debian keeps postgresql.conf and pg_hba.conf outside the data directory: write the standby's."""
    lines = [f"{name} = {_primary(f'SHOW {name}')}" for name in _AT_LEAST_PRIMARY]
    lines += ["hot_standby = on", "hot_standby_feedback = on", "shared_buffers = 32MB", "fsync = off"]
    (data / "postgresql.conf").write_text("\n".join(lines) + "\n")
    (data / "pg_hba.conf").write_text("local all all trust\nhost all all 127.0.0.1/32 trust\n")
    for name in ("postgresql.conf", "pg_hba.conf"):
        if os.geteuid() == 0:
            shutil.chown(data / name, "postgres", "postgres")


@pytest.fixture(scope="session")
def standby(django_db_setup) -> Iterator[Standby]:
    """A streaming hot standby of the primary cluster (it replays the test database too)."""
    _require_postgresql()
    if not _replication_allowed():
        unavailable("the primary's pg_hba.conf has no 'host replication postgres 127.0.0.1/32 trust' line")
    root = _owned_directory("custodian-standby-")
    server = Standby(port=free_port(), data=root / "data", pg_ctl=server_bin("pg_ctl"))
    backup = [
        server_bin("pg_basebackup"),
        "-h",
        "127.0.0.1",
        "-p",
        str(connection.settings_dict["PORT"] or 5432),
    ]
    backup += ["-U", "postgres", "-D", str(server.data), "-R", "-X", "stream", "-c", "fast"]
    try:
        subprocess.run(_as_postgres(backup), check=True, capture_output=True, timeout=300)
        _standby_conf(server.data)
        server.start()
        server.wait_for_replay()
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(root, ignore_errors=True)
        unavailable(f"the standby did not start: {exc.stderr.decode(errors='replace')[-500:]}")
    try:
        yield server
    finally:
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            server.pg_ctl_run("-m", "immediate", "-w", "-t", "60", "stop")
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class Pooler:
    """PgBouncer in transaction mode in front of the primary, on 127.0.0.1:``port``."""

    port: int

    def url(self, role: str = "postgres") -> str:
        return f"postgres://{role}@127.0.0.1:{self.port}/{connection.settings_dict['NAME']}"

    def transactions(self) -> int:
        """Transactions PgBouncer has passed to the test database so far (its admin console's SHOW STATS)."""
        shown = subprocess.run(
            [
                "psql",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "--csv",
                "-c",
                "SHOW STATS",
                "pgbouncer",
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
        rows = csv.DictReader(io.StringIO(shown))
        return sum(
            int(row["total_xact_count"])
            for row in rows
            if row["database"] == connection.settings_dict["NAME"]
        )


def _pgbouncer_ini(directory: Path, port: int) -> Path:
    db = connection.settings_dict
    primary = f"host=127.0.0.1 port={db['PORT'] or 5432}"
    budget = f"connect_query='SET statement_timeout = {POOLED_STATEMENT_TIMEOUT_MS}'"
    (directory / "userlist.txt").write_text('"postgres" ""\n"custodian_web" ""\n"custodian_executor" ""\n')
    ini = directory / "pgbouncer.ini"
    ini.write_text(
        f"[databases]\n{db['NAME']} = {primary} dbname={db['NAME']} {budget}\n* = {primary}\n\n"
        f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {directory / 'userlist.txt'}\nadmin_users = postgres\n"
        "pool_mode = transaction\nmax_client_conn = 200\ndefault_pool_size = 10\n"
        f"logfile = {directory / 'pgbouncer.log'}\n"
    )
    for path in directory.iterdir():
        if os.geteuid() == 0:
            shutil.chown(path, "postgres", "postgres")
    return ini


@pytest.fixture(scope="session")
def pooler(django_db_setup) -> Iterator[Pooler]:
    """A PgBouncer (pool_mode=transaction) in front of the primary for the whole run."""
    _require_postgresql()
    binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    if not Path(binary).exists():
        unavailable("pgbouncer is not installed (apt-get install pgbouncer)")
    directory = _owned_directory("custodian-pgbouncer-")
    server = Pooler(port=free_port())
    process = subprocess.Popen(
        _as_postgres([binary, str(_pgbouncer_ini(directory, server.port))]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def answers() -> bool:
        if process.poll() is not None:
            log = directory / "pgbouncer.log"
            unavailable(f"pgbouncer exited: {log.read_text()[-500:] if log.exists() else process.returncode}")
        with (
            contextlib.suppress(psycopg.OperationalError),
            psycopg.connect(server.url(), prepare_threshold=None) as conn,
        ):
            return conn.execute("SELECT 1").fetchone() == (1,)
        return False

    try:
        wait_until(answers, timeout=60, what="pgbouncer to answer")
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(directory, ignore_errors=True)


@dataclass
class ScaledWeb:
    pooler: Pooler
    standby: Standby


# The databases a scaling test may touch: the replica is a mirror, so it is never flushed.
SCALED_DATABASES = ["default", REPLICA]


@pytest.fixture(scope="module")
def replica_alias(standby) -> Iterator[None]:
    """A ``replica`` entry naming the standby, as config/settings.py builds it from CUSTODIAN_REPLICA_URL.

    Module-wide, so that it exists before each test's database fixture and after its teardown
    (Django checks a test's aliases at both), and nowhere outside these modules.
    """
    default = connections.settings["default"]
    entry = replica_database(standby.url(), primary=default)
    connections.settings[REPLICA] = connections.configure_settings(
        {"default": dict(default), REPLICA: entry}
    )[REPLICA]
    try:
        yield
    finally:
        connections[REPLICA].close()
        del connections.settings[REPLICA]


@pytest.fixture
def scaled_web(
    executor,  # noqa: F811 (the imported fixture)
    replica_alias,
    standby,
    pooler,
    live_server,
) -> Iterator[ScaledWeb]:
    """The live server as a pooled, replica-reading web process; the executor worker stays direct.

    The worker (``executor``) starts first, on its own direct URL. Then the ``default`` entry
    every new connection is built from points at PgBouncer with the options config/settings.py
    gives ``CUSTODIAN_DB_POOLER=transaction``.
    """
    default = connections.settings["default"]
    saved = {key: default.get(key) for key in ("HOST", "PORT", "OPTIONS", "DISABLE_SERVER_SIDE_CURSORS")}
    pooled = primary_database(pooler.url(), conn_max_age=0, pooler="transaction")
    connection.close()
    default.update(HOST=pooled["HOST"], PORT=pooled["PORT"], OPTIONS=pooled["OPTIONS"])
    default["DISABLE_SERVER_SIDE_CURSORS"] = pooled["DISABLE_SERVER_SIDE_CURSORS"]
    replica._down_until = 0.0
    try:
        yield ScaledWeb(pooler, standby)
    finally:
        connection.close()
        default.update(saved)
        replica._down_until = 0.0
