"""Reads of memories, always within the caller's tenant."""

import uuid

from django.db.models import Exists, OuterRef, Prefetch, QuerySet

from core.errors import NotFound
from evidence.models import EvidenceRevision
from memory_core.models import (
    AccessEvent,
    AccessEventItem,
    Memory,
    MemoryEvidence,
    MemoryLineage,
    MemoryVector,
)


class MemoryNotFound(NotFound):
    title = "Memory not found"


def active_memories_with_dedupe_key(*, tenant_id, dedupe_key: str, exclude_id=None):
    """Return active memories holding ``dedupe_key`` (the contradiction check)."""
    if not dedupe_key:
        return Memory.objects.none()
    memories = Memory.objects.filter(tenant_id=tenant_id, dedupe_key=dedupe_key, state=Memory.State.ACTIVE)
    if exclude_id is not None:
        memories = memories.exclude(pk=exclude_id)
    return memories


def memory_or_none(*, tenant_id, memory_id) -> Memory | None:
    """Return the tenant's memory with this id, or None (a create not applied yet)."""
    return Memory.objects.filter(tenant_id=tenant_id, pk=memory_id).first()


def memory_at_revision(*, memory: Memory | None, revision: int) -> Memory | None:
    """Return the memory as it was at ``revision`` (from its history), or None if it had no such revision."""
    if memory is None or revision < 1:
        return None
    if memory.revision == revision:
        return memory
    row = memory.history.filter(revision=revision).order_by("-history_id").first()
    return row.instance if row is not None else None


def memory_history(*, memory: Memory, limit: int = 20):
    """Return the memory's recorded revisions, newest first."""
    return memory.history.order_by("-history_date")[:limit]


def access_events(*, tenant_ids) -> QuerySet[AccessEvent]:
    """Return audited reads in the given tenants, items prefetched (``memory_core.filters`` narrows them)."""
    items = Prefetch("items", queryset=AccessEventItem.objects.order_by("id"))
    return (
        AccessEvent.objects.filter(tenant_id__in=tenant_ids).select_related("agent").prefetch_related(items)
    )


def lineage_of(*, memory: Memory) -> list[dict]:
    """The source revisions a compaction summary was derived from (empty for any other memory)."""
    rows = MemoryLineage.objects.filter(tenant_id=memory.tenant_id, successor=memory).order_by("source_id")
    return [{"memory_id": str(row.source_id), "revision": row.source_revision} for row in rows]


def revisions_without_vector(*, embedder: str) -> QuerySet[Memory]:
    """Memories not deleted whose current revision has no vector from ``embedder``, in id order."""
    vector = MemoryVector.objects.filter(
        memory=OuterRef("pk"), memory_revision=OuterRef("revision"), embedder=embedder
    )
    return Memory.objects.exclude(state=Memory.State.DELETED).filter(~Exists(vector)).order_by("pk")


def current_evidence(memories: list[Memory]) -> dict[uuid.UUID, list[dict]]:
    """What each memory's current revision rests on: each binding with its status, in the order its
    proposal froze it (one query). Only the binding is read, never the evidence's content (a whole
    conversation, say)."""
    if not memories:
        return {}
    revisions = {memory.id: memory.revision for memory in memories}
    rows = (
        MemoryEvidence.objects.filter(memory_id__any=list(revisions))
        .order_by("pk")
        .values_list(
            "memory_id",
            "memory_revision",
            "evidence_revision__source_id",
            "evidence_revision__revision",
            "evidence_revision__content_hash",
            "evidence_revision__status",
        )
    )
    evidence: dict[uuid.UUID, list[dict]] = {memory.id: [] for memory in memories}
    for memory_id, memory_revision, source_id, revision, content_hash, status in rows:
        if memory_revision == revisions[memory_id]:
            cited = EvidenceRevision.binding_of(source_id, revision, content_hash)
            evidence[memory_id].append({**cited, "status": status})
    return evidence
