"""Who holds an outbox lease, and taking over the leases whose holder is gone.

A worker that takes entries records itself as their holder: the PostgreSQL backend of the
connection it took them on (``pg_backend_pid()`` plus that backend's start time, so a reused pid
never passes for it). PostgreSQL ends a backend as soon as its client's socket closes (a
SIGKILLed worker) and ends every backend when it restarts, so "the holder is gone" is a fact the
database states at once, not a timeout: the sweep hands such entries out again on its next tick.
So is a holder whose connection has sat idle, outside any transaction, since well after it took
the lease: its process lives (a task that failed between lease and apply) but works on nothing.
The lease's expiry stays as the backstop (a holder alive but stuck), and is the only rule
where there is no backend to ask (SQLite, the embedded mode) and for entries that only sit in
a broker message.

Behind a transaction pooler (PgBouncer) the backend is whichever server connection the pooler
lent for one transaction: its pid names nobody, and an idle one would look like a holder gone.
So a worker refuses to start with ``CUSTODIAN_DB_POOLER`` set: executor workers connect to
PostgreSQL directly, only web processes go through the pooler (docs/operations.md).

None of this decides whether an entry is applied once: a takeover that was wrong (the holder was
alive after all) only means two workers try the same entry, and ``applying.apply_batch`` locks
its rows, drops those already done and lets one receipt exist per entry.
"""

from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import BooleanField, DateTimeField, F, Func, IntegerField, QuerySet
from django.utils import timezone

from proposals.models import OutboxEntry


class _BackendPid(Func):
    """This connection's backend process id."""

    template = "pg_backend_pid()"
    output_field = IntegerField()


class _BackendStart(Func):
    """When this connection's backend started (with its pid, it names the backend for good)."""

    template = "(SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid())"
    output_field = DateTimeField()


class _HolderGone(Func):
    """True for a row whose holder backend (pid, start) no longer exists, or sits idle.

    A worker holds its lease inside work: from the lease to the apply its connection is busy or
    in a transaction but for an instant. One idle (no transaction) for ``idle_seconds`` after
    taking the lease has stopped working on it, however it got there, while its process lives on
    and keeps the connection open. Run as the role the workers use: another role's sessions hide
    their start time, which only ever makes a live holder look gone.
    """

    template = (
        "NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = %(expressions)s"
        " AND NOT (a.state = 'idle' AND a.state_change < now() - %(idle_seconds)d * interval '1 second'))"
    )
    arg_joiner = " AND a.backend_start = "
    output_field = BooleanField()

    def __init__(self, *, idle_seconds: int) -> None:
        super().__init__(F("lease_holder_pid"), F("lease_holder_started_at"), idle_seconds=int(idle_seconds))


def refuse_transaction_pooler(**_: Any) -> None:
    """``celeryd_init``: stop a worker whose DATABASE_URL is a transaction pooler, in one line."""
    if settings.CUSTODIAN_DB_POOLER:
        raise SystemExit(
            "executor workers must connect to PostgreSQL directly (their leases name their backend):"
            " give them a DATABASE_URL that bypasses the pooler, without CUSTODIAN_DB_POOLER"
        )


def holder() -> dict[str, Any]:
    """The lease-holder fields for entries this connection takes (none where there is no backend)."""
    if connection.vendor != "postgresql":
        return {}
    return {"lease_holder_pid": _BackendPid(), "lease_holder_started_at": _BackendStart()}


def no_holder() -> dict[str, Any]:
    """The lease-holder fields of an entry nobody holds (pending again, or waiting in a message)."""
    return {"lease_holder_pid": None, "lease_holder_started_at": None}


@transaction.atomic(durable=True)
def reclaim_orphaned() -> int:
    """Put back to pending the leased entries whose holder is gone; return how many (the sweep's pass).

    Entries without a holder sit in a broker message and wait for their lease. Rows locked by a
    live apply are skipped, never waited for.
    """
    if connection.vendor != "postgresql":
        return 0
    orphaned = OutboxEntry.objects.filter(
        status=OutboxEntry.Status.DISPATCHED, lease_holder_pid__isnull=False
    )
    return _make_pending(
        orphaned.filter(_HolderGone(idle_seconds=settings.CUSTODIAN_OUTBOX_IDLE_HOLDER_SECONDS))
    )


@transaction.atomic(durable=True)
def give_back(*, entry_ids: list[Any]) -> int:
    """Put back to pending those of ``entry_ids`` still leased; return how many.

    For a worker that lost its connection while holding them: it will not apply them, and the
    database may not have noticed yet that their holder is gone. One a live apply has locked is
    left to it (if another worker took them over meanwhile, both trying is harmless).
    """
    return _make_pending(OutboxEntry.objects.filter(status=OutboxEntry.Status.DISPATCHED, pk__in=entry_ids))


def _make_pending(leased: QuerySet[OutboxEntry]) -> int:
    ids = list(leased.select_for_update(skip_locked=True).values_list("id", flat=True))
    return OutboxEntry.objects.filter(pk__in=ids).update(
        status=OutboxEntry.Status.PENDING, lease_expires_at=None, updated_at=timezone.now(), **no_holder()
    )
