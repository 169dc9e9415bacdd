"""Which database a read goes to: the primary, unless a read-only view opted in to the replica.

The default is the primary, for every query of every process: a view nobody marked never reads
stale rows. A handler decorated with ``reads_from_replica`` (recall, memory get, the review
queue, the audit list) sends its reads of governed content (``REPLICA_APPS``) to the replica,
with three exceptions that keep them on the primary: anything inside a transaction (a write
and what it reads), who the caller is and what they are allowed (``tenancy``, ``auth``,
``guardian``: a revoked grant or token counts at once), and what code marks ``on_primary()``
(a cursor naming the access event the previous page just wrote). Writes always go to the
primary; nothing is migrated on the replica.

The first replica-routed read of a request checks the replica once: if it does not answer, is
not a copy of the primary's database (another cluster, or no Custodian tables), or lags more
than ``CUSTODIAN_REPLICA_MAX_LAG_SECONDS``, the request reads the primary instead (and a
replica that failed is not asked again for ``CUSTODIAN_REPLICA_RETRY_SECONDS``). A replica
that fails later in the request answers the 503 ``service_unavailable`` problem every database
outage gets, never a 500.
"""

import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from core.databases import REPLICA

logger = logging.getLogger(__name__)

# Apps whose rows a replica-reading view may read stale (by at most the lag bound).
REPLICA_APPS = frozenset(
    {
        "memory_core",
        "evidence",
        "proposals",
        "reviews",
        "executor",
        "maintenance",
        "observations",
        "provenance",
    }
)

# Which cluster a server belongs to (a standby keeps its primary's), whether this database
# holds Custodian's tables, and seconds the replica is behind: 0 while it has replayed all it
# received (an idle primary commits nothing, so the last replayed commit's age alone would call a
# caught-up replica late).
CHECK_SQL = (
    "SELECT (SELECT system_identifier FROM pg_control_system()),"
    " to_regclass('memory_core_memory') IS NOT NULL,"
    " CASE WHEN NOT pg_is_in_recovery() OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()"
    " THEN 0 ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 'Infinity')"
    " END::float8"
)
IDENTITY_SQL = "SELECT system_identifier FROM pg_control_system()"

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class _ReplicaReads:
    """One request's opt-in; ``alias`` is decided at its first replica-routed read."""

    alias: str = ""


_reads: ContextVar[_ReplicaReads | None] = ContextVar("custodian_replica_reads", default=None)
_down_until = 0.0
_down_lock = threading.Lock()


def reads_from_replica(handler: F) -> F:
    """Let a read-only view handler read governed content from the replica (lag-bounded)."""

    @functools.wraps(handler)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        token = _reads.set(_ReplicaReads())
        try:
            return handler(*args, **kwargs)
        finally:
            _reads.reset(token)

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def on_primary() -> Iterator[None]:
    """Read from the primary inside the block, in a view that reads the replica otherwise."""
    token = _reads.set(None)
    try:
        yield
    finally:
        _reads.reset(token)


def replica_configured() -> bool:
    return REPLICA in connections.settings


def replica_lag() -> float:
    """Return the replica's replay lag in seconds.

    Raises DatabaseError when it does not answer, and ``NotAStandby`` when it is not a copy of
    the primary's database (another cluster, or a database without Custodian's tables).
    """
    with connections[REPLICA].cursor() as cursor:
        cursor.execute(CHECK_SQL)
        identity, has_tables, lag = cursor.fetchone()
    if identity != _primary_identity() or not has_tables:
        raise NotAStandby("CUSTODIAN_REPLICA_URL is not a standby of DATABASE_URL's database")
    return float(lag)


class NotAStandby(Exception):
    """The replica URL names a server or database that does not replicate the primary's."""


_identity: list[int] = []


def _primary_identity() -> int:
    """The primary cluster's system identifier (asked once per process; it never changes)."""
    if not _identity:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute(IDENTITY_SQL)
            _identity.append(int(cursor.fetchone()[0]))
    return _identity[0]


def _choose() -> str:
    """The alias this request's replica-routed reads use: the replica if it answers in time."""
    if not replica_configured() or time.monotonic() < _down_until:
        return DEFAULT_DB_ALIAS
    try:
        lag = replica_lag()
    except (DatabaseError, NotAStandby) as exc:
        connections[REPLICA].close()
        _skip_replica()
        logger.warning("replica unavailable, reading the primary: %s", str(exc).strip().splitlines()[0])
        return DEFAULT_DB_ALIAS
    if lag > settings.CUSTODIAN_REPLICA_MAX_LAG_SECONDS:
        logger.info("replica %.1fs behind, reading the primary", lag)
        return DEFAULT_DB_ALIAS
    return REPLICA


def _skip_replica() -> None:
    global _down_until
    with _down_lock:
        _down_until = time.monotonic() + settings.CUSTODIAN_REPLICA_RETRY_SECONDS


class ReplicaRouter:
    """Route reads as the module says; writes and migrations to the primary only."""

    def db_for_read(self, model: Any, **hints: Any) -> str:
        reads = _reads.get()
        if reads is None or model._meta.app_label not in REPLICA_APPS:
            return DEFAULT_DB_ALIAS
        if connections[DEFAULT_DB_ALIAS].in_atomic_block:
            return DEFAULT_DB_ALIAS
        if not reads.alias:
            reads.alias = _choose()
        return reads.alias

    def db_for_write(self, model: Any, **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True  # one database: the replica holds the primary's rows

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS
