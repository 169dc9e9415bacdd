"""Reading entities: resolve a mention against the tenant's canonical entities, expand a query.

Reads only (the executor writes entities). Redirects are followed to the
canonical entity, one step at a time and bounded, so a merge chain never
loops. ``entity_resolution`` holds the pure tiers.
"""

from typing import Any

from memory_core.entity_resolution import MAX_KNOWN, KnownEntity, Match, normalise, resolve
from memory_core.models import Entity

MAX_EXPANSION_TERMS = 20
_MAX_HOPS = 5


def known_entities(*, tenant_id: Any, kind: str | None = None) -> list[Entity]:
    rows = Entity.objects.filter(tenant_id=tenant_id).order_by("created_at", "id")
    if kind:
        rows = rows.filter(kind=kind)
    return list(rows[:MAX_KNOWN])


def resolve_mention(*, tenant_id: Any, mention: str, kind: str) -> list[Match]:
    """Tiered matches of ``mention`` among the tenant's entities of ``kind`` (redirected ones too)."""
    known = [KnownEntity(str(e.pk), e.kind, e.names) for e in known_entities(tenant_id=tenant_id, kind=kind)]
    return resolve(mention, kind, known)


def canonical(entity: Entity, by_id: dict[Any, Entity]) -> Entity:
    for _ in range(_MAX_HOPS):
        if entity.redirect_to_id is None or entity.redirect_to_id not in by_id:
            return entity
        entity = by_id[entity.redirect_to_id]
    return entity


def expansion_terms(*, tenant_id: Any, text: str) -> list[str]:
    """Names of the canonical entities mentioned in ``text`` and of everything merged into them (bounded)."""
    wanted = f" {normalise(text)} "
    if not wanted.strip():
        return []
    entities = known_entities(tenant_id=tenant_id)
    by_id = {entity.pk: entity for entity in entities}
    roots = {
        canonical(entity, by_id).pk
        for entity in entities
        if any(f" {normalise(name)} " in wanted for name in entity.names if normalise(name))
    }
    terms: list[str] = []
    for entity in entities:
        if canonical(entity, by_id).pk in roots:
            terms += [
                name for name in entity.names if normalise(name) and f" {normalise(name)} " not in wanted
            ]
    return list(dict.fromkeys(terms))[:MAX_EXPANSION_TERMS]


def entity_cluster(*, tenant_id: Any, entity_id: Any) -> list[Any]:
    """The canonical entity of ``entity_id`` and every entity merged into it (bounded); [] if unknown.

    A memory linked ``about`` any of them is about the same thing, whichever
    name the link was made under.
    """
    entities = known_entities(tenant_id=tenant_id)
    by_id = {entity.pk: entity for entity in entities}
    if entity_id not in by_id:
        return []
    root = canonical(by_id[entity_id], by_id).pk
    return [entity.pk for entity in entities if canonical(entity, by_id).pk == root]
