"""The entity kinds: create an entity, redirect one into another (merge), or back to itself (unmerge).

Each is re-checked by its proposals-side refusal (``proposals.kinds.entity``),
which locks the entities it reads.
"""

import uuid
from typing import Any

from django.utils import timezone

from executor.effects.base import Applied, ApplyContext, Check, Effect
from executor.effects.checks import check_evidence, stale
from executor.graph import entity_hash
from memory_core.models import Entity
from memory_core.mutations import create_entity, redirect_entity
from proposals.kinds.entity import entity_create_refusal, entity_merge_refusal, entity_unmerge_refusal
from proposals.models import Proposal


class EntityCreateEffect(Effect):
    def verify(self, ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
        return check_evidence(ctx) or stale(entity_create_refusal(ctx.proposal))

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        proposal = ctx.proposal
        entity = create_entity(
            entity_id=proposal.target_id,
            tenant_id=proposal.tenant_id,
            fields=proposal.fields,
            receipt_id=receipt_id,
            now=timezone.now(),
        )
        created = {"created": str(entity.pk), "kind": entity.kind, "row_hash": entity_hash(entity)}
        return Applied(ctx.memory, {"entity": created})


class EntityMergeEffect(Effect):
    def verify(self, ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
        return check_evidence(ctx) or stale(entity_merge_refusal(ctx.proposal))

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        return Applied(ctx.memory, _redirect(ctx.proposal, "into_entity_id", receipt_id))


class EntityUnmergeEffect(Effect):
    def verify(self, ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
        return check_evidence(ctx) or stale(entity_unmerge_refusal(ctx.proposal))

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        return Applied(ctx.memory, _redirect(ctx.proposal, None, receipt_id))


def _redirect(proposal: Proposal, into_field: str | None, receipt_id: uuid.UUID) -> dict[str, Any]:
    """Redirect the entity into the one ``into_field`` names (None: back to itself).

    The receipt binds the row's hash.
    """
    entity = Entity.objects.get(tenant_id=proposal.tenant_id, pk=proposal.fields["entity_id"])
    into = (
        Entity.objects.get(tenant_id=proposal.tenant_id, pk=proposal.fields[into_field])
        if into_field
        else None
    )
    redirect_entity(entity=entity, into=into, receipt_id=receipt_id, now=timezone.now())
    return {
        "entity": {
            "redirected": str(entity.pk),
            "to": str(into.pk) if into else None,
            "row_hash": entity_hash(entity),
        }
    }
