"""``create``: a new memory, built here and inserted in bulk with the batch's other creates."""

import uuid

from django.utils import timezone

from executor.effects.base import Applied, ApplyContext, Check, Effect, change_reason
from executor.effects.checks import check_content, check_dedupe_key, check_evidence, check_new
from memory_core.mutations import new_memory


class CreateEffect(Effect):
    def verify(self, ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
        return check_evidence(ctx) or check_new(ctx) or check_content(ctx) or check_dedupe_key(ctx)

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        proposal = ctx.proposal
        memory = new_memory(
            memory_id=proposal.target_id,
            tenant_id=proposal.tenant_id,
            fields=proposal.fields,
            now=timezone.now(),
            submitted=(proposal.created_at, proposal.submission_index),
        )
        ctx.writes.created.append((memory, ctx.evidence, change_reason(receipt_id)))
        ctx.writes.revised.append(memory)
        return Applied(memory)
