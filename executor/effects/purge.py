"""``purge``: remove the memory and every copy of its content; re-propose the summaries it was a source of."""

import uuid
from typing import Any, cast

from executor.effects.base import Applied, ApplyContext
from executor.effects.checks import target
from executor.effects.lifecycle import TransitionEffect
from maintenance.compaction import propose_resummaries
from memory_core.models import Memory
from memory_core.mutations import purge_memory
from memory_core.signals import memory_purged
from proposals.services import scrub_purged_content


class PurgeEffect(TransitionEffect):
    """Checked as the other lifecycle verbs; the receipt counts what was removed, and where."""

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        proposal, memory = ctx.proposal, target(ctx)
        removed, successors = purge_memory(memory=memory)
        removed.update(scrub_purged_content(purge=proposal, memory=memory, summaries=successors))
        for _, counts in memory_purged.send(Memory, tenant_id=memory.tenant_id, memory_ids=[memory.pk]):
            removed.update(cast(dict[str, int], counts or {}))
        effects: dict[str, Any] = {"purged": removed}
        if successors:  # summaries it was a source of: re-proposed without it, in this transaction
            resummaries = propose_resummaries(purge=proposal, successor_ids=successors)
            effects["resummarised"] = [
                {"memory_id": str(p.target_id), "proposal_id": str(p.pk)} for p in resummaries
            ]
        return Applied(None, effects)
