"""Freezing entity proposals: create, merge (a redirect) and unmerge, re-checked by the executor.

An exact match after normalisation needs no proposal at all: the create is
refused naming the entity to use (``entity_exists``). Anything else is a
proposal that policy sends to a person (no rule auto-applies entity
actions); a merge records the resolution tier it rests on, and merging
people is always reviewed whatever the tier.
"""

import uuid
from typing import Any

from core.errors import DomainError
from memory_core.entities import resolve_mention
from memory_core.entity_resolution import KnownEntity, merge_needs_review, normalise, resolve
from memory_core.models import Entity
from proposals.models import Proposal
from proposals.payloads import ProposalPayload


class EntityRefused(DomainError):
    status = 422


class EntityExists(EntityRefused):
    code = "entity_exists"
    status = 409
    title = "An entity of this kind already has this name after normalisation: use it"


class EntityInvalid(EntityRefused):
    code = "entity_invalid"
    title = "The entity action does not fit the entities as they are"


def prepare_entity(proposal: Proposal, tenant_id: Any, payload: ProposalPayload) -> tuple[str, dict]:
    spec = payload["entity"]
    if proposal.action == Proposal.Action.ENTITY_CREATE:
        return _prepare_create(proposal, tenant_id, spec)
    entity = _entity(tenant_id, spec.get("entity_id"))
    proposal.target_memory_id = entity.pk
    proposal.base_revision = 0
    if proposal.action == Proposal.Action.ENTITY_MERGE:
        into = _entity(tenant_id, spec.get("into_entity_id"))
        if into.pk == entity.pk or into.kind != entity.kind or entity.redirect_to_id or into.redirect_to_id:
            raise EntityInvalid("merge two distinct, unmerged entities of one kind")
        known = [KnownEntity(str(into.pk), into.kind, into.names)]
        tiers = [match.tier for name in entity.names for match in resolve(name, entity.kind, known)]
        tier = min(tiers, key=["exact", "initialism", "typo", "containment"].index) if tiers else "none"
        proposal.fields = {
            "entity_id": str(entity.pk),
            "into_entity_id": str(into.pk),
            "kind": entity.kind,
            "tier": tier,
            "needs_review": merge_needs_review(entity.kind, tier),
        }
    else:
        if entity.redirect_to_id is None:
            raise EntityInvalid("only a merged (redirected) entity can be unmerged")
        proposal.fields = {"entity_id": str(entity.pk), "from_entity_id": str(entity.redirect_to_id)}
    return "current", {}


def _prepare_create(proposal: Proposal, tenant_id: Any, spec: dict) -> tuple[str, dict]:
    name, kind = spec["name"], spec["kind"]
    aliases = list(dict.fromkeys(a for a in spec.get("aliases", []) if normalise(a) != normalise(name)))
    matches = resolve_mention(tenant_id=tenant_id, mention=name, kind=kind)
    exact = [match for match in matches if match.tier == "exact"]
    if exact:
        raise EntityExists(entity_id=exact[0].entity_id)
    proposal.base_revision = 0
    proposal.fields = {
        "kind": kind,
        "name": name,
        "aliases": aliases,
        "near": [{"entity_id": m.entity_id, "tier": m.tier} for m in matches[:10]],
    }
    proposal.target_memory_id = proposal.target_memory_id or uuid.uuid4()
    return "new", {}


def _entity(tenant_id: Any, entity_id: Any) -> Entity:
    entity = Entity.objects.filter(tenant_id=tenant_id, pk=entity_id).first() if entity_id else None
    if entity is None:
        raise EntityInvalid("no such entity in this tenant")  # another tenant's reads as missing
    return entity


def entity_refusal(proposal: Proposal) -> str | None:
    """Why the executor must not apply this entity action now (None: apply it)."""
    fields = proposal.fields
    if proposal.action == Proposal.Action.ENTITY_CREATE:
        if Entity.objects.filter(pk=proposal.target_memory_id).exists():
            return "entity already exists"
        return None
    rows = Entity.objects.select_for_update().filter(
        tenant_id=proposal.tenant_id,
        pk__in=[fields["entity_id"], fields.get("into_entity_id") or fields.get("from_entity_id")],
    )
    found = {str(row.pk): row for row in rows}
    entity = found.get(fields["entity_id"])
    if entity is None:
        return "entity no longer exists"
    if proposal.action == Proposal.Action.ENTITY_MERGE:
        into = found.get(fields["into_entity_id"])
        if into is None or entity.redirect_to_id or into.redirect_to_id:
            return "an entity was merged or removed since the proposal"
        return None
    if str(entity.redirect_to_id) != fields["from_entity_id"]:
        return "the entity is no longer merged into the same winner"
    return None
