"""``link``: both ends in this tenant and scope, an allowlisted relation, their evidence.

A link is typed from the source memory's registration allowlist
(``links.relations``; none registered, none allowed). It joins two active
memories of one tenant and one scope, or a memory and one of the tenant's
canonical entities (``about`` only: an entity has no scope, and a merged
entity is no end, its winner is). It freezes what each end rests on (a
memory's evidence bindings, an entity's last receipt), so the executor can
refuse it if either end moved. The executor re-checks the same with
``link_refusal``.
"""

from typing import Any

from core.errors import DomainError
from memory_core.models import Entity, Memory, MemoryEvidence, MemoryLink
from proposals.kinds.base import Freezing, Prepared
from proposals.kinds.target import freeze_target, refuse_stale_base, target_memory
from proposals.models import Proposal
from registrations.compiled import ActiveRegistration


class LinkRefused(DomainError):
    status = 422


class LinkRelationNotAllowed(LinkRefused):
    code = "link_relation_not_allowed"
    title = "The registration does not allow this relation from this memory type"


class LinkCrossScope(LinkRefused):
    code = "link_cross_scope"
    title = "Links join memories of one tenant and one scope only"


class LinkEndNotFound(LinkRefused):
    code = "link_end_not_found"
    title = "The other end of the link is not an active memory or an entity in this tenant"


class LinkEntityMerged(LinkRefused):
    code = "link_entity_merged"
    title = "The entity was merged into another: link to the canonical entity"


def allowed_relations(registration: ActiveRegistration, memory_type: str) -> list[str]:
    return list(registration.entry(memory_type).get("links", {}).get("relations", []))


def prepare_link(freezing: Freezing) -> Prepared:
    """Freeze the link on ``proposal.fields``; the result is the source's snapshot."""
    proposal, payload = freezing.proposal, freezing.payload
    link = payload["link"]
    memory = target_memory(freezing)
    freeze_target(
        freezing,
        {"relation": link["relation"]}
        | (
            {"to_entity_id": str(link["to_entity_id"])}
            if "to_entity_id" in link
            else {"to_memory_id": str(link["to_memory_id"]), "to_revision": link["to_revision"]}
        ),
    )
    if memory is None:
        return Prepared("missing")
    refuse_stale_base(memory, payload["base_revision"])
    if link["relation"] not in allowed_relations(freezing.registration, memory.type):
        raise LinkRelationNotAllowed(relation=link["relation"], memory_type=memory.type)
    if "to_entity_id" in link:
        proposal.fields["evidence"] = _entity_end(memory, link)
    else:
        proposal.fields["evidence"] = _memory_end(memory, link)
    return Prepared(("current" if memory.is_active else "inactive"), memory.snapshot(), memory)


def _memory_end(memory: Memory, link: dict[str, Any]) -> dict[str, Any]:
    """Refuse another memory as the other end unless it is active, at its revision, in the same scope."""
    other = Memory.objects.filter(tenant_id=memory.tenant_id, pk=link["to_memory_id"]).first()
    if other is None or other.pk == memory.pk or not other.is_active:
        raise LinkEndNotFound()  # another tenant's memory reads as missing
    refuse_stale_base(other, link["to_revision"])
    if other.scope != memory.scope:
        raise LinkCrossScope(from_scope=memory.scope, to_scope=other.scope)
    return ends_evidence(memory, other)


def _entity_end(memory: Memory, link: dict[str, Any]) -> dict[str, Any]:
    """Refuse an entity as the other end unless the relation allows one and it is canonical."""
    if link["relation"] not in MemoryLink.ENTITY_RELATIONS:
        raise LinkRelationNotAllowed(relation=link["relation"], end="entity")
    entity = Entity.objects.filter(tenant_id=memory.tenant_id, pk=link["to_entity_id"]).first()
    if entity is None:
        raise LinkEndNotFound()  # another tenant's entity reads as missing
    if entity.redirect_to_id is not None:
        raise LinkEntityMerged(canonical_entity_id=str(entity.redirect_to_id))
    return entity_end_evidence(memory, entity)


def entity_end_evidence(source: Memory, entity: Entity) -> dict[str, Any]:
    """The source's evidence bindings and the entity's last receipt: the link is bound to both."""
    return {
        "from": ends_evidence(source, source)["from"],
        "to_entity": {"entity_id": str(entity.pk), "receipt_id": str(entity.receipt_id)},
    }


def ends_evidence(source: Memory, target: Memory) -> dict[str, list[dict[str, Any]]]:
    """The evidence bindings each end's current revision rests on (the link is bound to both)."""
    rows = MemoryEvidence.objects.filter(
        memory_id__in=[source.pk, target.pk], memory_revision__in={source.revision, target.revision}
    ).select_related("evidence_revision")
    bindings: dict[str, list[dict[str, Any]]] = {"from": [], "to": []}
    for row in rows.order_by("evidence_revision__source_id", "evidence_revision__revision"):
        end = source if row.memory_id == source.pk else target
        if row.memory_revision == end.revision:
            bindings["from" if end is source else "to"].append(dict(row.evidence_revision.binding()))
    return bindings


def link_refusal(
    proposal: Proposal,
    source: Memory,
    registration: ActiveRegistration,
    *,
    moved_by_run: frozenset[str] = frozenset(),
) -> str | None:
    """Why the executor must not write this link now (None: write it); the same checks as freezing.

    ``moved_by_run``: members a Dreaming run moved itself (its merged-away duplicates, now
    dormant); the executor checked that nothing else moved them, so the other end may be one.
    """
    fields = proposal.fields
    if fields["relation"] not in allowed_relations(registration, source.type):
        return f"relation {fields['relation']} is no longer allowed from {source.type}"
    if "to_entity_id" in fields:
        return _entity_end_refusal(fields, source)
    # Locked (the executor's transaction), so the end cannot move between this check and the write.
    other = (
        Memory.objects.select_for_update()
        .filter(tenant_id=source.tenant_id, pk=fields["to_memory_id"])
        .first()
    )
    by_run = other is not None and str(other.pk) in moved_by_run
    if other is None or not (other.is_active or (by_run and other.state == Memory.State.DORMANT)):
        return "the other end is no longer an active memory"
    if (other.revision != fields["to_revision"] and not by_run) or other.scope != source.scope:
        return f"the other end moved (revision {other.revision}, scope {other.scope})"
    if ends_evidence(source, other) != fields["evidence"]:
        return "the evidence of an end changed"
    if source.links_out.filter(target=other, relation=fields["relation"]).exists():
        return "this link already exists"
    return None


def _entity_end_refusal(fields: dict[str, Any], source: Memory) -> str | None:
    # Locked, so a merge cannot land between this check and the write.
    entity = (
        Entity.objects.select_for_update()
        .filter(tenant_id=source.tenant_id, pk=fields["to_entity_id"])
        .first()
    )
    if entity is None:
        return "the entity no longer exists"
    if entity.redirect_to_id is not None:
        return f"the entity was merged into {entity.redirect_to_id}"
    if entity_end_evidence(source, entity) != fields["evidence"]:
        return "the source's evidence or the entity changed"
    if source.links_out.filter(target_entity=entity, relation=fields["relation"]).exists():
        return "this link already exists"
    return None
