"""The entity kinds: ``entity_create``, ``entity_merge`` (a redirect) and ``entity_unmerge``.

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
from proposals.kinds.base import Freezing, Prepared
from proposals.models import Proposal


class EntityRefused(DomainError):
    status = 422


class EntityExists(EntityRefused):
    code = "entity_exists"
    status = 409
    title = "An entity of this kind already has this name after normalisation: use it"


class EntityInvalid(EntityRefused):
    code = "entity_invalid"
    title = "The entity action does not fit the entities as they are"


def prepare_entity_create(freezing: Freezing) -> Prepared:
    """Freeze a new entity with its distinct aliases and its near matches; refuse an exact match."""
    proposal, spec = freezing.proposal, freezing.payload["entity"]
    name, kind = spec["name"], spec["kind"]
    aliases = list(dict.fromkeys(a for a in spec.get("aliases", []) if normalise(a) != normalise(name)))
    matches = resolve_mention(tenant_id=freezing.tenant_id, mention=name, kind=kind)
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
    proposal.target_id = proposal.target_id or uuid.uuid4()
    return Prepared("new")


def prepare_entity_merge(freezing: Freezing) -> Prepared:
    """Freeze a redirect of one entity into another of its kind, with the resolution tier it rests on."""
    spec = freezing.payload["entity"]
    entity = _target_entity(freezing)
    into = _entity(freezing.tenant_id, spec.get("into_entity_id"))
    if into.pk == entity.pk or into.kind != entity.kind or entity.redirect_to_id or into.redirect_to_id:
        raise EntityInvalid("merge two distinct, unmerged entities of one kind")
    known = [KnownEntity(str(into.pk), into.kind, into.names)]
    tiers = [match.tier for name in entity.names for match in resolve(name, entity.kind, known)]
    tier = min(tiers, key=["exact", "initialism", "typo", "containment"].index) if tiers else "none"
    freezing.proposal.fields = {
        "entity_id": str(entity.pk),
        "into_entity_id": str(into.pk),
        "kind": entity.kind,
        "tier": tier,
        "needs_review": merge_needs_review(entity.kind, tier),
    }
    return Prepared("current")


def prepare_entity_unmerge(freezing: Freezing) -> Prepared:
    """Freeze the undoing of a merge: the entity and the winner it is redirected to now."""
    entity = _target_entity(freezing)
    if entity.redirect_to_id is None:
        raise EntityInvalid("only a merged (redirected) entity can be unmerged")
    freezing.proposal.fields = {"entity_id": str(entity.pk), "from_entity_id": str(entity.redirect_to_id)}
    return Prepared("current")


def _target_entity(freezing: Freezing) -> Entity:
    entity = _entity(freezing.tenant_id, freezing.payload["entity"].get("entity_id"))
    freezing.proposal.target_id = entity.pk
    freezing.proposal.base_revision = 0
    return entity


def _entity(tenant_id: Any, entity_id: Any) -> Entity:
    entity = Entity.objects.filter(tenant_id=tenant_id, pk=entity_id).first() if entity_id else None
    if entity is None:
        raise EntityInvalid("no such entity in this tenant")  # another tenant's reads as missing
    return entity


# --- the executor's re-checks (None: apply it) --------------------------------------------------


def entity_create_refusal(proposal: Proposal) -> str | None:
    """Why the executor must not create this entity now: one with its id exists."""
    if Entity.objects.filter(pk=proposal.target_id).exists():
        return "entity already exists"
    return None


def entity_merge_refusal(proposal: Proposal) -> str | None:
    """Why the executor must not merge now: either entity is gone, or was merged meanwhile."""
    found = _locked_pair(proposal, "into_entity_id")
    entity, into = found.get(proposal.fields["entity_id"]), found.get(proposal.fields["into_entity_id"])
    if entity is None:
        return "entity no longer exists"
    if into is None or entity.redirect_to_id or into.redirect_to_id:
        return "an entity was merged or removed since the proposal"
    return None


def entity_unmerge_refusal(proposal: Proposal) -> str | None:
    """Why the executor must not unmerge now: the entity is gone, or redirected elsewhere."""
    entity = _locked_pair(proposal, "from_entity_id").get(proposal.fields["entity_id"])
    if entity is None:
        return "entity no longer exists"
    if str(entity.redirect_to_id) != proposal.fields["from_entity_id"]:
        return "the entity is no longer merged into the same winner"
    return None


def _locked_pair(proposal: Proposal, other: str) -> dict[str, Entity]:
    """Lock the entity and the other one the action names (the executor's transaction), by id."""
    rows = Entity.objects.select_for_update().filter(
        tenant_id=proposal.tenant_id, pk__in=[proposal.fields["entity_id"], proposal.fields.get(other)]
    )
    return {str(row.pk): row for row in rows}
