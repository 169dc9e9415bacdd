"""Prove that memories changed only through receipts.

The chain shows receipts were not altered; these checks show memories were
not altered behind the receipts' back: every memory revision in history has
an ``applied`` receipt, and every memory's current content hash is the one
its latest applied receipt recorded.
"""

from typing import Any

from django.db.models import Exists, OuterRef, Subquery

from executor.models import Receipt
from memory_core.models import Memory


def memory_problems(tenant_id: Any, *, limit: int = 20) -> list[str]:
    """Return up to ``limit`` descriptions of memory revisions no receipt accounts for."""
    applied = Receipt.objects.filter(tenant_id=tenant_id, outcome=Receipt.Outcome.APPLIED)
    orphans = (
        Memory.history.filter(tenant_id=tenant_id)
        .exclude(Exists(applied.filter(memory_id=OuterRef("id"), after_revision=OuterRef("revision"))))
        .order_by()
        .values_list("id", "revision")[:limit]
    )
    problems = [f"memory {mid} revision {rev} has no applied receipt" for mid, rev in orphans]
    latest_hash = Subquery(
        applied.filter(memory_id=OuterRef("id")).order_by("-seq").values("after_content_hash")[:1]
    )
    memories = Memory.objects.filter(tenant_id=tenant_id).annotate(receipt_hash=latest_hash)
    for memory in memories.iterator(chunk_size=2000):
        if memory.receipt_hash != memory.content_hash:
            problems.append(f"memory {memory.id} content differs from its last applied receipt")
            if len(problems) >= limit:
                break
    return problems
