"""Prove that memories changed only through receipts.

The chain shows receipts were not altered; these checks show memories were
not altered behind the receipts' back: every memory revision in history has
an ``applied`` receipt, and every memory's current content hash is the one
its latest applied receipt recorded.
"""

from typing import Any

from django.db.models import Exists, OuterRef, Subquery

from core.canonical import digest
from executor.models import Receipt
from memory_core.models import Memory


def memory_problems(
    tenant_id: Any, *, ids: tuple[str, str | None] | None = None, limit: int = 20
) -> list[str]:
    """Return up to ``limit`` descriptions of memory revisions no receipt accounts for.

    ``ids`` limits the check to memories with ids in [low, high) (no high:
    to the end), so a big tenant can be checked in parallel ranges.
    """
    in_range = {}
    if ids:
        in_range["id__gte"] = ids[0]
        if ids[1]:
            in_range["id__lt"] = ids[1]
    applied = Receipt.objects.filter(tenant_id=tenant_id, outcome=Receipt.Outcome.APPLIED)
    orphans = (
        Memory.history.filter(tenant_id=tenant_id, **in_range)
        .exclude(Exists(applied.filter(memory_id=OuterRef("id"), after_revision=OuterRef("revision"))))
        .order_by()
        .values_list("id", "revision")[:limit]
    )
    problems = [f"memory {mid} revision {rev} has no applied receipt" for mid, rev in orphans]
    latest_hash = Subquery(
        applied.filter(memory_id=OuterRef("id")).order_by("-seq").values("after_content_hash")[:1]
    )
    columns = (*Memory.SNAPSHOT_COLUMNS, "id", "receipt_hash")
    memories = (
        Memory.objects.filter(tenant_id=tenant_id, **in_range)
        .annotate(receipt_hash=latest_hash)
        .values_list(*columns)
    )
    for values in memories.iterator(chunk_size=5000):  # rows, not instances: a million of them
        row = dict(zip(columns, values, strict=True))
        if row["receipt_hash"] != digest(Memory.snapshot_of(row)):
            problems.append(f"memory {row['id']} content differs from its last applied receipt")
            if len(problems) >= limit:
                break
    return problems
