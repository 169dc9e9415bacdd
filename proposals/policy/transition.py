"""What a change does to a memory, judged on its before and after, not the after alone.

A rule that matches the after-state cannot tell "a public preference" from
"a restricted preference made public". The facts computed here can: the
strictest sensitivity the change touches, and the first way it widens what
the memory exposes or loosens how it is governed (its *escalation*).
"""

from typing import Any

SENSITIVITY_RANK = {"public": 0, "internal": 1, "confidential": 2, "restricted": 3}
# The ways a change can escalate, in the order they are reported.
ESCALATIONS = (
    "moves_memory",
    "lowers_sensitivity",
    "relaxes_retention",
    "unfences",
    "retires_manual_retention",
)
_IDENTITY = ("subject", "type", "scope")
MANUAL = "manual_review_required"
# The verbs that retire a memory (purge has its own two-person rule; restore brings one back).
RETIRING = ("expire", "revoke", "delete", "dormant")


def escalation(action: str, before: dict[str, Any], after: dict[str, Any], *, fenced: bool) -> str:
    """Return how this change escalates (one of :data:`ESCALATIONS`), or ``"none"``.

    - ``moves_memory``: the subject, type or scope of an existing memory changes;
    - ``lowers_sensitivity``: the memory becomes visible to more readers;
    - ``relaxes_retention``: a ``manual_review_required`` memory stops being one;
    - ``unfences``: the change rebinds a memory fenced by invalidated evidence;
    - ``retires_manual_retention``: a ``manual_review_required`` memory is expired, revoked,
      deleted or made dormant, whoever proposes it (a sweep, a Dreaming merge, an agent).
    """
    if action == "revalidate":
        return "unfences"
    if action in RETIRING and before.get("retention_policy") == MANUAL:
        return "retires_manual_retention"
    if action != "update" or not before or not after:
        return "none"
    if any(before.get(name) != after.get(name) for name in _IDENTITY):
        return "moves_memory"
    if _rank(after) < _rank(before):
        return "lowers_sensitivity"
    if before.get("retention_policy") == MANUAL and after.get("retention_policy") != MANUAL:
        return "relaxes_retention"
    if fenced:
        return "unfences"
    return "none"


def strictest_sensitivity(before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """Return the more sensitive of the two states' sensitivities (the after-state's if alone)."""
    candidates = [state["sensitivity"] for state in (before, after) if state.get("sensitivity")]
    return max(candidates, key=SENSITIVITY_RANK.__getitem__) if candidates else None


def _rank(state: dict[str, Any]) -> int:
    return SENSITIVITY_RANK.get(state.get("sensitivity") or "", 0)
