"""One module per action kind, found through one table: ``KINDS``.

``proposals.services.freezing.freeze_and_classify`` does what every kind
shares (bind the evidence and the policy context, compute the facts, classify)
and looks the kind up here for the rest: its target, its frozen fields, its
refusals, and the result the rule set sees. The executor's half of each kind
(its re-checks and its write) is ``executor.effects.EFFECTS``; its refusal
checks that need the proposal's own rules (``link_refusal``,
``compaction_refusal``, ``entity_*_refusal``) live in these modules, which the
executor imports (never the other way).

Kinds that freeze the same thing share a module and a preparation, with one
entry each: the lifecycle verbs, ``fence`` and ``revalidate`` (``reason_only``),
and the three entity actions (``entity``).

Adding a kind: a module here and one in ``executor/effects/``, and one line
in each table (``tests/test_action_kinds.py`` fails until both are there).
"""

from proposals.kinds.base import Freezing, KindSpec, Prepared
from proposals.kinds.compact import member_evidence, prepare_compact
from proposals.kinds.create import prepare_create
from proposals.kinds.entity import prepare_entity_create, prepare_entity_merge, prepare_entity_unmerge
from proposals.kinds.erase import prepare_erase
from proposals.kinds.link import prepare_link
from proposals.kinds.reason_only import prepare_reason_only, prepare_transition
from proposals.kinds.register import prepare_register
from proposals.kinds.update import prepare_update
from proposals.models import Proposal

Action = Proposal.Action

KINDS: dict[Proposal.Action, KindSpec] = {
    Action.CREATE: KindSpec(prepare_create),
    Action.UPDATE: KindSpec(prepare_update),
    Action.EXPIRE: KindSpec(prepare_transition),
    Action.REVOKE: KindSpec(prepare_transition),
    Action.DELETE: KindSpec(prepare_transition),
    Action.PURGE: KindSpec(prepare_transition),
    Action.RESTORE: KindSpec(prepare_transition),
    Action.DORMANT: KindSpec(prepare_transition),
    Action.FENCE: KindSpec(prepare_reason_only),
    Action.REVALIDATE: KindSpec(prepare_reason_only),
    Action.REGISTER: KindSpec(prepare_register),
    Action.LINK: KindSpec(prepare_link),
    Action.ENTITY_CREATE: KindSpec(prepare_entity_create),
    Action.ENTITY_MERGE: KindSpec(prepare_entity_merge),
    Action.ENTITY_UNMERGE: KindSpec(prepare_entity_unmerge),
    # Bound to its members' evidence, never to a claim.
    Action.COMPACT: KindSpec(prepare_compact, bound_evidence=member_evidence),
    # Planned by the server from the subject; bound to no evidence.
    Action.ERASE: KindSpec(prepare_erase, bound_evidence=lambda tenant_id, payload: []),
}

__all__ = ["KINDS", "Freezing", "KindSpec", "Prepared"]
