"""``compact``: create the successor with its lineage and evidence union; make every member dormant.

Every member must still be as the plan froze it
(``proposals.kinds.compact.compaction_refusal``), or nothing is written and
the receipt lists the members it left alone.
"""

import uuid
from typing import Any

from django.utils import timezone

from executor.effects.base import Applied, ApplyContext, Check, Effect
from executor.effects.checks import check_evidence, check_new, stale
from memory_core.mutations import compact_memories
from proposals.kinds.compact import compaction_refusal
from proposals.models import Proposal


class CompactEffect(Effect):
    def verify(self, ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
        return check_evidence(ctx) or check_new(ctx) or stale(compaction_refusal(ctx.proposal, ctx.members))

    def locked_members(self, proposal: Proposal) -> list[uuid.UUID]:
        """The memories the compaction moves: the batch locks them with the targets."""
        return [uuid.UUID(member["memory_id"]) for member in proposal.fields["members"]]

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        """The receipt lists each member with the revision it left (its memory hashes are bound
        with the receipt's, ``executor.revision_hashes.bind_memory_rows``)."""
        proposal, fields = ctx.proposal, ctx.proposal.fields
        sources = [ctx.members[uuid.UUID(member["memory_id"])] for member in fields["members"]]
        successor = compact_memories(
            successor_id=proposal.target_id,
            tenant_id=proposal.tenant_id,
            fields=fields["memory"],
            evidence=ctx.evidence,
            sources=sources,
            receipt_id=receipt_id,
            now=timezone.now(),
        )
        ctx.writes.revised.extend([successor, *sources])
        compaction = {
            "written": True,
            "successor": str(successor.pk),
            "summariser": fields["summariser"],
            # Importance is registered per type (activation.importance): the successor, of the
            # members' type, carries the highest (the only) importance any member had.
            "importance": ctx.registration.active.entry(successor.type)["activation"]["importance"],
            "members": [
                {
                    "memory_id": str(source.pk),
                    "revision": source.revision - 1,
                    "after_revision": source.revision,
                }
                for source in sources
            ],
        }
        return Applied(successor, {"compaction": compaction})

    def not_applied(self, ctx: ApplyContext) -> dict[str, Any]:
        return {"compaction": {"written": False, "members": ctx.proposal.fields["members"]}}
