"""Prove that memories, their history and their evidence changed only through receipts.

The chain shows receipts were not altered; these checks show the rows they
bound were not altered behind their back. For each memory, from its applied
receipts in chain order:

- the memory row exists unless purged, is at the revision its last applied
  receipt left, and equals that revision's history row;
- every history row has an applied receipt and hashes, with its evidence
  links, to what the receipts recorded for its revision (the superseding
  receipt's ``before_memory_hash`` if there is one, else the writer's
  ``after_memory_hash``);
- every revision a receipt wrote is still in history, unless purged;
- every evidence link belongs to a revision in history and names evidence
  that still has the hash the link recorded.

Receipts, history rows, links and memory rows are read as four streams in
memory id order and merged here; the two comparisons that need no hash
(memory row against history row, link against evidence) are anti-joins that
return only what differs. No query per memory, so a big tenant is checked
in parallel id ranges; each range reads from one snapshot, so what the
executor commits meanwhile never looks orphaned. Ids are read as text in the
database's own spelling (no UUID parsing), which sorts as the ids do.

Receipts written before migration 0006 bind content only: a memory still at
a revision such a receipt wrote has that revision's content hash checked.
"""

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from django.db import connection, transaction
from django.db.models import Exists, F, Lookup, OuterRef, TextField
from django.db.models.functions import Cast

from core.canonical import digest
from evidence.models import EvidenceRevision
from executor.models import Receipt, uuid_text
from executor.revision_hashes import (
    MEMORY_COLUMNS,
    compaction_members,
    memory_hash,
    snapshot_of_stored,
    stored_columns,
)
from memory_core.models import Memory, MemoryEvidence

_RECEIPT_COLUMNS = (
    "before_revision",
    "after_revision",
    "after_content_hash",
    "before_memory_hash",
    "after_memory_hash",
)


def memory_problems(
    tenant_id: Any, *, ids: tuple[str, str | None] | None = None, limit: int = 20
) -> list[str]:
    """Return up to ``limit`` descriptions of memory rows no receipt accounts for.

    ``ids`` limits the check to memories with ids in [low, high) (no high:
    to the end), so a big tenant can be checked in parallel ranges.
    """
    with _one_snapshot():
        return _memory_problems(tenant_id, ids, limit)


def _memory_problems(tenant_id: Any, ids: tuple[str, str | None] | None, limit: int) -> list[str]:
    memories = Memory.objects.filter(tenant_id=tenant_id, **_in_range("id", ids))
    links = MemoryEvidence.objects.filter(tenant_id=tenant_id, **_in_range("memory_id", ids))
    streams = [
        Receipt.objects.filter(
            tenant_id=tenant_id, outcome=Receipt.Outcome.APPLIED, **_in_range("memory_id", ids)
        )
        .order_by("memory_id", "seq")
        .values_list(_text("memory_id"), _text("id"), *_RECEIPT_COLUMNS, "seq"),
        Memory.history.filter(tenant_id=tenant_id, **_in_range("id", ids))
        .order_by("id", "revision", "history_id")
        .values_list(*stored_columns()),
        links.order_by("memory_id", "memory_revision", "id").values_list(
            _text("memory_id"), "memory_revision", "id", _text("evidence_revision_id"), "content_hash"
        ),
        memories.order_by("id").values_list(_text("id"), "revision"),
    ]
    unlike_history = set(
        memories.exclude(_same_history_row()).order_by("id").values_list(_text("id"), flat=True)[:limit]
    )
    stale_links = {
        memory_id: link
        for memory_id, *link in links.exclude(content_hash=F("evidence_revision__content_hash"))
        .order_by("memory_id")
        .values_list(
            _text("memory_id"),
            "memory_revision",
            "evidence_revision__source_id",
            "evidence_revision__revision",
        )[:limit]
    }
    moved = _compaction_members(tenant_id)
    problems: list[str] = []
    rows = [stream.iterator(chunk_size=5000) for stream in streams]
    try:
        for memory_id, groups in _by_memory(rows):
            receipts = sorted([*groups[0], *moved.get(uuid_text(memory_id), [])], key=lambda row: row[-1])
            groups[0] = [row[:-1] for row in receipts]
            problems += _problems_of(memory_id, *groups)
            if memory_id in unlike_history or memory_id in stale_links:
                problems += _differences(
                    memory_id, groups, memory_id in unlike_history, stale_links.get(memory_id)
                )
            if len(problems) >= limit:
                break
    finally:
        for stream in rows:  # close their server-side cursors before the snapshot's transaction ends
            stream.close()
    return problems[:limit]


def _compaction_members(tenant_id: Any) -> dict[str, list[tuple[Any, ...]]]:
    """The member revisions applied compactions wrote, as receipt rows of each member (with seq).

    A compaction has one receipt (its memory is the successor) that also
    moved every member to a dormant revision; its chained effects list each
    member's revisions and memory hashes (``executor.revision_hashes.bind_memory_rows``).
    """
    moved: dict[str, list[tuple[Any, ...]]] = {}
    # Along receipt_compaction_idx: no join of every receipt with its proposal.
    compactions = Receipt.objects.filter(
        tenant_id=tenant_id, outcome=Receipt.Outcome.APPLIED, effects__has_key="compaction"
    )
    for receipt_id, seq, effects in compactions.order_by("seq").values_list("id", "seq", "effects"):
        for member in compaction_members(effects):
            memory_id = uuid_text(member["memory_id"])
            moved.setdefault(memory_id, []).append(
                (
                    memory_id,
                    uuid_text(receipt_id),
                    member["revision"],
                    member["after_revision"],
                    "",
                    member["before_memory_hash"],
                    member["after_memory_hash"],
                    seq,
                )
            )
    return moved


def evidence_problems(tenant_id: Any, *, limit: int = 20) -> list[str]:
    """Return up to ``limit`` evidence revisions whose content no longer has their recorded hash.

    A revision an applied erasure retracted holds the retracted marker instead; it
    passes only if that erasure's receipt names it with the hash it has.
    """
    revisions = EvidenceRevision.objects.filter(tenant_id=tenant_id).order_by("source_id", "revision")
    problems = []
    retracted: set[tuple[str, int, str]] | None = None
    for source_id, revision, content, content_hash in revisions.values_list(
        "source_id", "revision", "content", "content_hash"
    ).iterator(chunk_size=1000):
        if content == EvidenceRevision.RETRACTED_CONTENT:
            retracted = _retracted(tenant_id) if retracted is None else retracted
            if (uuid_text(source_id), revision, content_hash) in retracted:
                continue
        problem = _evidence_problem(content, content_hash)
        if problem:
            problems.append(f"evidence {source_id}@{revision} {problem}")
            if len(problems) >= limit:
                break
    return problems


def _retracted(tenant_id: Any) -> set[tuple[str, int, str]]:
    """The revisions applied erasures retracted, as their certificates name them (source, number, hash)."""
    certificates = Receipt.objects.filter(
        tenant_id=tenant_id, outcome=Receipt.Outcome.APPLIED, effects__erasure__has_key="source"
    ).values_list("effects", flat=True)
    return {
        (uuid_text(effects["erasure"]["source"]["evidence_id"]), item["revision"], item["content_hash"])
        for effects in certificates
        for item in effects["erasure"]["source"]["revisions"]
    }


def _evidence_problem(content: Any, content_hash: str) -> str:
    try:
        if digest(content) != content_hash:
            return "content does not match its hash"
    except ValueError as exc:  # stored by an older version that let an unhashable number through
        return f"content cannot be hashed ({exc})"
    return ""


def _problems_of(
    memory_id: str, receipts: list[Any], history: list[Any], links: list[Any], memory: list[Any]
) -> list[str]:
    """Check one memory's rows against its applied receipts (in chain order)."""
    expected = {}  # revision -> (the hash its history row must have, content hash, receipt id)
    purged_by = None
    last: tuple[Any, Any] | None = None
    for _, receipt_id, before, after, content_hash, before_hash, after_hash in receipts:
        last = (receipt_id, after)
        if after is None:
            purged_by = receipt_id
        elif after != before:
            expected[after] = (after_hash, content_hash, receipt_id)
            if before_hash:
                expected[before] = (before_hash, "", receipt_id)
    name = uuid_text(memory_id)
    problems = _row_problems(name, memory[0] if memory else None, last, purged_by, bool(history))
    linked: dict[int, list[Any]] = {}
    for link in links:
        linked.setdefault(link[1], []).append((link[3], link[4]))
    for kept in history:
        revision = kept[2]
        if revision not in expected:
            problems.append(f"memory {name} revision {revision} has no applied receipt")
        elif purged_by:
            problems.append(f"memory {name} revision {revision} is in history though it was purged")
        else:
            want, content_hash, receipt_id = expected[revision]
            if want:
                found = memory_hash(kept, linked.get(revision, ()))
            elif last is not None and revision == last[1]:  # before 0006, not superseded since: content
                want, found = content_hash, digest(snapshot_of_stored(kept))
            if want and found != want:
                problems.append(
                    f"memory {name} revision {revision} differs from receipt {uuid_text(receipt_id)}"
                )
    kept_revisions = {kept[2] for kept in history}
    if not purged_by:
        problems += [
            f"memory {name} revision {revision} is missing from history (receipt {uuid_text(receipt_id)})"
            for revision, (_, _, receipt_id) in expected.items()
            if revision not in kept_revisions
        ]
    problems += [
        f"evidence link {link[2]} of memory {name} revision {link[1]} belongs to no revision in history"
        for link in links
        if link[1] not in kept_revisions
    ]
    return problems


def _row_problems(
    name: str, row: tuple[Any, ...] | None, last: tuple[Any, ...] | None, purged_by: Any, in_history: bool
) -> list[str]:
    """The memory row must exist exactly when, and at the revision, its receipts say."""
    if purged_by:
        return [f"memory {name} exists though receipt {uuid_text(purged_by)} purged it"] if row else []
    if row is None:
        return (
            [f"memory {name} is missing (receipt {uuid_text(last[0])} left revision {last[1]})"]
            if last
            else []
        )
    if last is None:  # (its history rows, if any, say so)
        return [] if in_history else [f"memory {name} revision {row[1]} has no applied receipt"]
    if row[1] != last[1]:
        return [f"memory {name} is at revision {row[1]}; receipt {uuid_text(last[0])} left {last[1]}"]
    return []


def _differences(
    memory_id: str, groups: list[Any], unlike_history: bool, stale_link: tuple[Any, ...] | None
) -> list[str]:
    """Name what the anti-joins found: a memory row unlike its history row, a link unlike its evidence."""
    name, problems = uuid_text(memory_id), []
    if stale_link:
        revision, source_id, number = stale_link
        problems.append(
            f"memory {name} revision {revision}: evidence {source_id}@{number} no longer has its hash"
        )
    receipts, _, _, memory = groups
    if unlike_history and memory and receipts and receipts[-1][3] == memory[0][1]:
        problems.append(f"memory {name} content differs from its history and last receipt")
    return problems


if TYPE_CHECKING:
    _BoolLookup = Lookup[bool]
else:  # Lookup is generic only in the stubs
    _BoolLookup = Lookup


class _Same(_BoolLookup):
    """``lhs IS NOT DISTINCT FROM rhs``: equal, two nulls included (SQLite spells it ``IS``)."""

    lookup_name = "same"

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        operator = "IS" if connection.vendor == "sqlite" else "IS NOT DISTINCT FROM"
        return f"{lhs} {operator} {rhs}", [*lhs_params, *rhs_params]


def _same_history_row() -> Exists:
    """A history row of the memory's current revision with every column equal to the memory row's."""
    same = [
        _Same(F(column), OuterRef(column)) for column in MEMORY_COLUMNS if column not in ("id", "revision")
    ]
    return Exists(Memory.history.filter(id=OuterRef("id"), revision=OuterRef("revision")).filter(*same))


@contextmanager
def _one_snapshot() -> Iterator[None]:
    """Read every query from one snapshot, so what the executor commits meanwhile never looks orphaned."""
    if connection.in_atomic_block:  # the caller's transaction (an import, a test) is the snapshot
        yield
        return
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


def _text(column: str) -> Cast:
    return Cast(column, TextField())


def _by_memory(
    streams: list[Iterable[tuple[Any, ...]]],
) -> Iterator[tuple[str, list[list[tuple[Any, ...]]]]]:
    """Merge row streams ordered by memory id (their first column): yield each id with its rows per stream."""
    iterators = [iter(stream) for stream in streams]
    heads: list[tuple[Any, ...] | None] = [next(rows, None) for rows in iterators]
    while True:
        present = [head[0] for head in heads if head is not None]
        if not present:
            return
        memory_id, groups = min(present), []
        for k, rows in enumerate(iterators):
            group = []
            while (head := heads[k]) is not None and head[0] == memory_id:
                group.append(head)
                heads[k] = next(rows, None)
            groups.append(group)
        yield memory_id, groups


def _in_range(column: str, ids: tuple[str, str | None] | None) -> dict[str, str]:
    if not ids:
        return {}
    bounds = {f"{column}__gte": ids[0]}
    if ids[1]:
        bounds[f"{column}__lt"] = ids[1]
    return bounds
