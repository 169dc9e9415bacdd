"""Reads of memories, always within the caller's tenant."""

from django.db.models import Exists, OuterRef, Prefetch, Q

from core.errors import NotFound
from memory_core.models import AccessEvent, AccessEventItem, Memory


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


def memory_history(*, memory: Memory, limit: int = 20):
    """Return the memory's recorded revisions, newest first."""
    return memory.history.order_by("-history_date")[:limit]


def access_events(
    *,
    tenant_ids,
    memory=None,
    actor: str = "",
    action: str = "",
    correlation_id: str = "",
    since=None,
):
    """Return audited reads in the given tenants, filtered on indexed columns, items prefetched."""
    events = AccessEvent.objects.filter(tenant_id__in=tenant_ids).select_related("agent")
    if memory:
        served = AccessEventItem.objects.filter(event=OuterRef("pk"), memory_id=memory)
        events = events.filter(Q(target_memory_id=memory) | Exists(served))
    if actor:
        events = events.filter(agent__name=actor)
    if action:
        events = events.filter(action=action)
    if correlation_id:
        events = events.filter(correlation_id=correlation_id)
    if since:
        events = events.filter(created_at__gte=since)
    return events.prefetch_related(Prefetch("items", queryset=AccessEventItem.objects.order_by("id")))
