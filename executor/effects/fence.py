"""``fence``: record that a memory rests on invalidated evidence; the memory itself is not written."""

import uuid

from executor.effects.base import Applied, ApplyContext, Check, Effect
from executor.effects.checks import check_at_base, check_dedupe_key, check_evidence, target


class FenceEffect(Effect):
    """A fence records a fact about any memory that still exists, whatever its state."""

    def verify(self, ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
        return check_evidence(ctx) or check_at_base(ctx) or check_dedupe_key(ctx)

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        memory = target(ctx)
        ctx.writes.revised.append(memory)
        return Applied(memory, {"fenced": ctx.proposal.fields["reason"]})
