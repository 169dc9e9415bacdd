"""``link``: write an allowlisted typed link from the target memory to another memory or an entity.

The re-check is the proposals' own (``proposals.kinds.link.link_refusal``),
which also locks the other end until the write.
"""

import uuid

from django.utils import timezone

from executor.effects.base import Applied, ApplyContext, Check, Effect
from executor.effects.checks import check_active_at_base, check_dedupe_key, check_evidence, stale, target
from executor.graph import link_hash
from memory_core.models import Entity, Memory
from memory_core.mutations import create_link
from proposals.kinds.link import link_refusal


class LinkEffect(Effect):
    def verify(self, ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
        """A link's other end, relation and both ends' evidence must be as frozen.

        A Dreaming merge's lineage link may land after its duplicate went dormant
        by the same run (``moved_by_run``): the window check vouched for that move.
        """
        return (
            check_evidence(ctx)
            or check_active_at_base(ctx)
            or check_dedupe_key(ctx)
            or stale(
                link_refusal(ctx.proposal, target(ctx), ctx.registration.active, moved_by_run=moved_by_run)
            )
        )

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        """Write the link (its other end locked by ``link_refusal``); the receipt binds the row's hash."""
        proposal, source = ctx.proposal, target(ctx)
        fields, other_memory, entity = proposal.fields, None, None
        if "to_entity_id" in fields:
            entity = Entity.objects.get(tenant_id=proposal.tenant_id, pk=fields["to_entity_id"])
        else:
            other_memory = Memory.objects.get(tenant_id=proposal.tenant_id, pk=fields["to_memory_id"])
        link = create_link(
            source=source,
            target=other_memory,
            target_entity=entity,
            relation=fields["relation"],
            evidence=fields["evidence"],
            receipt_id=receipt_id,
            now=timezone.now(),
        )
        other = (
            {"to_entity_id": str(link.target_entity_id)}
            if link.target_entity_id
            else {"to_memory_id": str(link.target_id)}
        )
        effects = {
            "linked": {
                "link_id": str(link.pk),
                "source_id": str(source.pk),
                "relation": link.relation,
                **other,
                "row_hash": link_hash(link),
            }
        }
        return Applied(source, effects)


def _link_refusal(ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
    return stale(link_refusal(ctx.proposal, target(ctx), ctx.registration.active, moved_by_run=moved_by_run))
