"""``revalidate``: lift a fence once the memory's evidence is valid again (a new revision, no change)."""

import uuid

from django.utils import timezone

from executor.effects.base import Applied, ApplyContext, Check, Effect, change_reason
from executor.effects.checks import check_active_at_base, check_dedupe_key, check_evidence, target
from memory_core.mutations import update_memory


class RevalidateEffect(Effect):
    def verify(self, ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
        return check_evidence(ctx) or check_active_at_base(ctx) or check_dedupe_key(ctx)

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        memory = update_memory(
            memory=target(ctx),
            changes={},
            evidence=ctx.evidence,
            now=timezone.now(),
            change_reason=change_reason(receipt_id),
        )
        ctx.writes.revised.append(memory)
        return Applied(memory, {"unfenced": ctx.proposal.fields["reason"]})
