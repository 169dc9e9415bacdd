"""What a receipt binds of a memory: one revision as stored, with that revision's evidence links.

A revision lives in three tables: the memory row (while it is current), its
history row, and its evidence links. A receipt that writes a revision hashes
it, read back inside the executor's own transaction, into
``after_memory_hash``; it hashes the revision before it again into
``before_memory_hash``, because superseding content closes that revision's
validity window in history. ``executor.audit`` recomputes both from the rows.
"""

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import BigIntegerField, Func, TextField
from django.db.models.functions import Cast
from django.db.models.sql.compiler import SQLCompiler

from core.canonical import digest
from core.history import history_model
from executor.models import Receipt, uuid_text
from memory_core.models import Memory, MemoryEvidence

if TYPE_CHECKING:
    from django.db.models.sql.compiler import _AsSqlType  # the stubs' (sql, params) pair

# Every stored column of a revision but the search vector (derived) and history's bookkeeping.
MEMORY_COLUMNS = ("id", "tenant_id", "revision", "created_at", "updated_at", *Memory.SNAPSHOT_COLUMNS)
_DATETIMES = frozenset({"created_at", "updated_at", *Memory.DATETIME_FIELDS})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_DATETIME_POSITIONS = tuple(k for k, column in enumerate(MEMORY_COLUMNS) if column in _DATETIMES)


class _Microseconds(Func):
    """A timestamp as whole microseconds since 1970 (UTC), computed by the database.

    Cheaper to read than a datetime (a third of a revision's cost to read
    went to parsing two of them) and spelled the same on both databases.
    """

    output_field = BigIntegerField()

    def as_postgresql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> "_AsSqlType":
        template = (
            "(EXTRACT(EPOCH FROM date_trunc('second', %(expressions)s))::bigint * 1000000"
            " + MOD(EXTRACT(MICROSECONDS FROM %(expressions)s)::bigint, 1000000))"
        )
        return self.as_sql(compiler, connection, template=template, **extra)

    def as_sqlite(self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any) -> "_AsSqlType":
        # Django stores UTC as 'YYYY-MM-DD HH:MM:SS[.ffffff]'; CAST('' AS INTEGER) is 0.
        template = (
            "(CAST(ROUND((julianday(substr(%(expressions)s, 1, 19)) - 2440587.5) * 86400) AS INTEGER)"
            " * 1000000 + CAST(substr(%(expressions)s, 21, 6) AS INTEGER))"
        )
        return self.as_sql(compiler, connection, template=template, **extra)


def stored_columns() -> list[str | Func]:
    """Return what ``values_list`` reads for :func:`memory_hash`: ids as text, times as microseconds."""
    return [
        Cast(column, TextField())
        if column in ("id", "tenant_id")
        else _Microseconds(column)
        if column in _DATETIMES
        else column
        for column in MEMORY_COLUMNS
    ]


def memory_hash(row: Sequence[Any], links: Iterable[tuple[Any, str]]) -> str:
    """Return the hash of one revision: a row of :data:`MEMORY_COLUMNS` values and its links.

    It is the digest of the canonical JSON array of those values in that
    order (ids as dashed text, times as microseconds since 1970), then the
    sorted ``"<evidence revision id>:<content hash>"`` of its ``links``. An
    array, not an object: a third of the cost to encode. Values may come
    from :func:`stored_columns` on either database or from a model instance.
    """
    values = list(row)
    values[0], values[1] = uuid_text(values[0]), uuid_text(values[1])
    for k in _DATETIME_POSITIONS:
        if isinstance(values[k], datetime):
            values[k] = (values[k] - _EPOCH) // _MICROSECOND
    values.append(sorted(f"{uuid_text(revision_id)}:{content_hash}" for revision_id, content_hash in links))
    return digest(values)


def snapshot_of_stored(row: Sequence[Any]) -> dict[str, Any]:
    """Return ``Memory.snapshot()`` of a revision read with :func:`stored_columns`."""
    values = dict(zip(MEMORY_COLUMNS, row, strict=True))
    for column in _DATETIMES:
        if values[column] is not None:
            values[column] = _EPOCH + values[column] * _MICROSECOND
    return Memory.snapshot_of(values)


def bind_memory_rows(receipts: list[dict[str, Any]]) -> None:
    """Set the memory hashes of the applied receipts among ``receipts`` that wrote a revision.

    Call inside the executor's transaction after its writes and before the
    receipts are appended: two queries for a whole batch. A fence (same
    revision before and after) and a purge (no revision after) bind nothing.
    """
    writers = [
        row
        for row in receipts
        if row["outcome"] == Receipt.Outcome.APPLIED
        and row["after_revision"] is not None
        and row["after_revision"] != row["before_revision"]
    ]
    if not writers:
        return
    wanted = defaultdict(set)
    for row in writers:
        wanted[row["memory_id"]].add(row["after_revision"])
        if row["before_revision"] is not None:
            wanted[row["memory_id"]].add(row["before_revision"])
        for member in compaction_members(row["effects"]):
            wanted[member["memory_id"]] |= {member["revision"], member["after_revision"]}
    hashes = _stored_hashes(wanted)
    for row in writers:
        memory_id = uuid_text(row["memory_id"])
        row["after_memory_hash"] = hashes[memory_id, row["after_revision"]]
        if row["before_revision"] is not None:
            row["before_memory_hash"] = hashes.get((memory_id, row["before_revision"]), "")
        for member in compaction_members(row["effects"]):
            # A compaction's one receipt also wrote each member's dormant revision: bind those too.
            member_id = uuid_text(member["memory_id"])
            member["before_memory_hash"] = hashes.get((member_id, member["revision"]), "")
            member["after_memory_hash"] = hashes[member_id, member["after_revision"]]


def compaction_members(effects: dict[str, Any]) -> list[dict[str, Any]]:
    """The members an applied compaction receipt moved (each wrote one dormant revision); [] otherwise."""
    compaction = (effects or {}).get("compaction") or {}
    return compaction.get("members", []) if compaction.get("written") else []


def _stored_hashes(wanted: dict[Any, set[int]]) -> dict[tuple[str, int], str]:
    """Hash the named revisions as history and the evidence links now hold them.

    Read by memory ids and by revision numbers, each an ``IN`` list, and narrowed to the exact
    pairs here: an ``OR`` of one condition per pair cost more CPU to compile than the reads.
    """
    exact = {
        (uuid_text(memory_id), revision) for memory_id, revisions in wanted.items() for revision in revisions
    }
    ids, numbers = list(wanted), sorted({revision for _, revision in exact})
    linked: defaultdict[tuple[str, int], list[tuple[Any, str]]] = defaultdict(list)
    for memory_id, revision, *link in MemoryEvidence.objects.filter(
        memory_id__in=ids, memory_revision__in=numbers
    ).values_list("memory_id", "memory_revision", "evidence_revision_id", "content_hash"):
        linked[uuid_text(memory_id), revision].append((link[0], str(link[1])))
    hashes = {}
    history = history_model(Memory)._default_manager.filter(id__in=ids, revision__in=numbers)
    for row in history.order_by("history_id").values_list(*stored_columns()):
        key = (uuid_text(row[0]), row[2])
        if key in exact:
            hashes[key] = memory_hash(row, linked[key])
    return hashes
