"""Recall follows allowlisted links one hop: bounded, and every linked memory decided like a hit.

A linked memory is drawn from the same candidate pool as the search (same
tenant, states, filters) and decided by the same read policy (fences,
modes, deny), so a link never shows what a search could not; denied ones
only count as omitted. An entity end (``about``) is shown only for a hit
served ``raw``: which person or company a memory is about is part of its
content, so a masked, summarised or metadata-only hit does not reveal it.
At most three queries for any page: the links, the memory ends, the entities.
"""

from typing import Any

from django.db.models import Q, QuerySet

from memory_core.models import Entity, Memory, MemoryLink

MAX_LINKS_PER_HIT = 5


def linked_context(
    served: list, pool: QuerySet, policy: Any, context: dict, per_hit: int, *, as_memory
) -> tuple[dict, dict, int]:
    """Return {hit id: [(relation, direction, end)]}, {end: (memory, rule) or entity JSON}, denied count.

    An end is a memory id, or ``("entity", id)`` for an entity end.
    """
    if not per_hit or not served:
        return {}, {}, 0
    hits = {memory.id for memory, _ in served}
    raw = {memory.id for memory, rule in served if rule.mode == "raw"}
    placed: dict[Any, list[tuple[str, str, Any]]] = {pk: [] for pk in hits}
    rows = MemoryLink.objects.filter(Q(source_id__in=hits) | Q(target_id__in=hits)).order_by(
        "created_at", "id"
    )
    limit = len(hits) * per_hit * 2
    for source, target, entity, relation in rows.values_list(
        "source_id", "target_id", "target_entity_id", "relation"
    )[:limit]:
        if entity is not None:
            if source in raw and len(placed[source]) < per_hit:
                placed[source].append((relation, "out", ("entity", entity)))
            continue
        for hit, other, direction in ((source, target, "out"), (target, source, "in")):
            if hit in placed and len(placed[hit]) < per_hit:
                placed[hit].append((relation, direction, other))
    ends = {end for links in placed.values() for _, _, end in links}
    wanted = {end for end in ends if not isinstance(end, tuple)}
    nearby: dict[Any, Any] = _entity_ends({end[1] for end in ends if isinstance(end, tuple)})
    denied = 0
    for row in pool.filter(id__in=wanted) if wanted else []:
        memory: Memory = as_memory(row)
        rule = policy.decide(memory, context)
        if rule.mode == "deny":
            denied += 1
        else:
            nearby[memory.id] = (memory, rule)
    return placed, nearby, denied


def _entity_ends(ids: set) -> dict[tuple[str, Any], dict]:
    entities = Entity.objects.filter(id__in=ids).values("id", "kind", "name", "redirect_to_id") if ids else []
    return {
        ("entity", row["id"]): {
            "entity_id": str(row["id"]),
            "kind": row["kind"],
            "name": row["name"],
            "canonical_entity_id": str(row["redirect_to_id"] or row["id"]),
        }
        for row in entities
    }
