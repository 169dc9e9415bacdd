"""Recall follows allowlisted links one hop: bounded, and every linked memory decided like a hit.

A linked memory is drawn from the same candidate pool as the search (same
tenant, states, filters) and decided by the same read policy (fences,
modes, deny), so a link never shows what a search could not; denied ones
only count as omitted. Two queries for any page: the links, then the ends.
"""

from typing import Any

from django.db.models import Q, QuerySet

from memory_core.models import Memory, MemoryLink

MAX_LINKS_PER_HIT = 5


def linked_context(
    served: list, pool: QuerySet, policy: Any, context: dict, per_hit: int, *, as_memory
) -> tuple[dict, dict, int]:
    """Return {hit id: [(relation, direction, other id)]}, {other id: (memory, rule)} and how many denied."""
    if not per_hit or not served:
        return {}, {}, 0
    hits = {memory.id for memory, _ in served}
    placed: dict[Any, list[tuple[str, str, Any]]] = {pk: [] for pk in hits}
    rows = MemoryLink.objects.filter(Q(source_id__in=hits) | Q(target_id__in=hits)).order_by(
        "created_at", "id"
    )
    for link in rows.values_list("source_id", "target_id", "relation")[: len(hits) * per_hit * 2]:
        source, target, relation = link
        for hit, other, direction in ((source, target, "out"), (target, source, "in")):
            if hit in placed and len(placed[hit]) < per_hit:
                placed[hit].append((relation, direction, other))
    wanted = {other for ends in placed.values() for _, _, other in ends}
    nearby, denied = {}, 0
    for row in pool.filter(id__in=wanted) if wanted else []:
        memory: Memory = as_memory(row)
        rule = policy.decide(memory, context)
        if rule.mode == "deny":
            denied += 1
        else:
            nearby[memory.id] = (memory, rule)
    return placed, nearby, denied
