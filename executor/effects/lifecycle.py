"""The lifecycle verbs expire, revoke, delete, restore and dormant: one state change each.

They share everything (one ``TransitionEffect``, one table entry per verb):
the state machine must still allow the verb from the memory's state, and the
write is ``change_state``. ``purge``, the sixth verb, is checked the same way
but removes the memory (``executor.effects.purge``).
"""

import uuid

from django.utils import timezone

from executor.effects.base import Applied, ApplyContext, Check, Effect, change_reason
from executor.effects.checks import check_dedupe_key, check_evidence, check_transition, target
from memory_core.mutations import change_state


class TransitionEffect(Effect):
    def verify(self, ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
        return check_evidence(ctx) or check_transition(ctx) or check_dedupe_key(ctx)

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        memory = change_state(
            memory=target(ctx),
            verb=ctx.proposal.action,
            reason=ctx.proposal.fields["reason"],
            now=timezone.now(),
            change_reason=change_reason(receipt_id),
        )
        ctx.writes.revised.append(memory)
        return Applied(memory)
