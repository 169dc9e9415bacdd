"""The kinds that change no content: the six lifecycle verbs, ``fence`` and ``revalidate``.

Each freezes only a reason, on the memory at its base revision, and they
share one preparation (one table entry per kind). A lifecycle verb
(expire, revoke, delete, purge, restore, dormant) also needs a transition the
state machine (``memory_core.lifecycle``) allows from the current state; the
executor checks it again. A fence (Custodian's record that a memory's
evidence was invalidated) or its lifting applies to any memory that exists.
"""

from memory_core.lifecycle import next_state
from proposals.kinds.base import Freezing, Prepared
from proposals.kinds.target import freeze_target, refuse_stale_base, target_memory


def prepare_reason_only(freezing: Freezing) -> Prepared:
    """Freeze the reason; the result is the memory as it is (the action changes no field)."""
    payload = freezing.payload
    memory = target_memory(freezing)
    freeze_target(freezing, {"reason": payload["reason"]})
    if memory is None:
        return Prepared("missing")
    refuse_stale_base(memory, payload["base_revision"])
    return Prepared("current", memory.snapshot(), memory)


def prepare_transition(freezing: Freezing) -> Prepared:
    """Freeze a lifecycle verb; refuse a transition the state machine does not allow."""
    prepared = prepare_reason_only(freezing)
    if prepared.memory is not None:
        next_state(prepared.memory.state, freezing.proposal.action)
    return prepared
