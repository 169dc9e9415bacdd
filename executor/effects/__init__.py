"""One module per action kind's executor half, found through one table: ``EFFECTS``.

``executor.applying`` does what every kind shares (lock the batch, the
release's authority, the Dreaming window, the gates, the receipts) and looks
the kind up here for the rest: its own re-checks (``Effect.verify``) and its
write (``Effect.apply``). The freezing half of each kind is
``proposals.kinds.KINDS``.

Kinds that share everything share a class, with one entry each: expire,
revoke, delete, restore and dormant are one ``TransitionEffect``
(``lifecycle``); purge is checked as they are but writes its own way
(``purge``). The three entity kinds share a module (``entity``).

Adding a kind: a module here and one in ``proposals/kinds/``, and one line
in each table (``tests/test_action_kinds.py`` fails until both are there).
"""

from executor.effects.base import Applied, ApplyContext, Check, Effect, RegistrationState, Window, Writes
from executor.effects.compact import CompactEffect
from executor.effects.create import CreateEffect
from executor.effects.entity import EntityCreateEffect, EntityMergeEffect, EntityUnmergeEffect
from executor.effects.erase import EraseEffect
from executor.effects.fence import FenceEffect
from executor.effects.lifecycle import TransitionEffect
from executor.effects.link import LinkEffect
from executor.effects.purge import PurgeEffect
from executor.effects.register import RegisterEffect
from executor.effects.revalidate import RevalidateEffect
from executor.effects.update import UpdateEffect
from proposals.models import Proposal

Action = Proposal.Action

EFFECTS: dict[Proposal.Action, Effect] = {
    Action.CREATE: CreateEffect(),
    Action.UPDATE: UpdateEffect(),
    Action.EXPIRE: TransitionEffect(),
    Action.REVOKE: TransitionEffect(),
    Action.DELETE: TransitionEffect(),
    Action.PURGE: PurgeEffect(),
    Action.RESTORE: TransitionEffect(),
    Action.DORMANT: TransitionEffect(),
    Action.FENCE: FenceEffect(),
    Action.REVALIDATE: RevalidateEffect(),
    Action.REGISTER: RegisterEffect(),
    Action.LINK: LinkEffect(),
    Action.ENTITY_CREATE: EntityCreateEffect(),
    Action.ENTITY_MERGE: EntityMergeEffect(),
    Action.ENTITY_UNMERGE: EntityUnmergeEffect(),
    Action.COMPACT: CompactEffect(),
    Action.ERASE: EraseEffect(),
}


def effect_of(proposal: Proposal) -> Effect:
    """The executor half of the proposal's kind."""
    return EFFECTS[Proposal.Action(proposal.action)]


__all__ = [
    "EFFECTS",
    "Applied",
    "ApplyContext",
    "Check",
    "Effect",
    "RegistrationState",
    "Window",
    "Writes",
    "effect_of",
]
