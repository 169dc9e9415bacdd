"""``update``: the memory's changed fields at its base revision; a purge's re-summary also withdraws
the summary it replaces."""

import uuid

from django.utils import timezone

from executor.effects.base import Applied, ApplyContext, Check, Effect, change_reason
from executor.effects.checks import (
    check_active_at_base,
    check_content,
    check_dedupe_key,
    check_evidence,
    target,
)
from maintenance.compaction import RESUMMARY_KEY
from memory_core.mutations import update_memory, withdraw_superseded_summary
from proposals.models import Proposal
from tenancy.models import Agent


class UpdateEffect(Effect):
    def verify(self, ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
        return check_evidence(ctx) or check_active_at_base(ctx) or check_content(ctx) or check_dedupe_key(ctx)

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        proposal = ctx.proposal
        memory = update_memory(
            memory=target(ctx),
            changes=proposal.fields,
            evidence=ctx.evidence,
            now=timezone.now(),
            change_reason=change_reason(receipt_id),
        )
        ctx.writes.revised.append(memory)
        if _is_resummary(proposal):
            withdrawn = withdraw_superseded_summary(memory=memory, revision=proposal.base_revision)
            return Applied(
                memory, {"withdrawn": {"revision": proposal.base_revision, "history_rows": withdrawn}}
            )
        return Applied(memory)


def _is_resummary(proposal: Proposal) -> bool:
    """True for the system agent's re-summary after a purge (an agent's key alone proves nothing)."""
    return (
        proposal.idempotency_key.startswith(RESUMMARY_KEY)
        and Agent.objects.filter(pk=proposal.submitted_by_id, is_system=True).exists()
    )
