"""Bounded Dreaming's plan checks: the server re-validates every plan before it proposes anything.

A planner gets no more power than its window: a plan that oversteps the
window, its budget or the five source-preserving kinds is refused whole.
"""

from typing import Any

from core.errors import DomainError
from maintenance.dreaming.planner import ENTITY_END, KINDS, Action
from maintenance.dreaming.windows import FrozenWindow
from memory_core.models import Memory, MemoryLink
from registrations.document import LINK_RELATIONS

HIGH_RISK_MERGE_TYPES = ("profile", "relationship")  # people: never merged without an owner


class PlanRefused(DomainError):
    code = "dreaming_plan_refused"
    status = 422
    title = "The planner's plan oversteps its window, its budget or the five source-preserving kinds"


def check_plan(frozen: FrozenWindow, actions: Any) -> list[Action]:
    """Refuse the whole plan unless every action is one of the five kinds, inside the window and budget.

    Each member is changed (updated, archived, merged away) by at most one
    action, a merge survivor and a link's ends are never changed by another,
    and nothing moves a memory out of its subject, scope or type.
    """
    members = frozen.members
    if not isinstance(actions, list) or len(actions) > frozen.window.budget:
        raise PlanRefused(f"a plan is a list within its budget: at most {frozen.window.budget} actions")
    changed: set[str] = set()
    kept: set[str] = set()
    for action in actions:
        if not isinstance(action, Action) or action.kind not in KINDS:
            raise PlanRefused(f"unknown action kind {getattr(action, 'kind', action)!r}")
        entity = action.other.removeprefix(ENTITY_END) if action.other.startswith(ENTITY_END) else ""
        named = {
            *action.cites,
            *([action.target] if action.target else []),
            *([action.other] if action.other and not entity else []),
        }
        if not action.cites or not named <= set(members):
            raise PlanRefused(f"a {action.kind} cites memories outside its window")
        if entity and (
            action.kind != "link"
            or action.relation not in MemoryLink.ENTITY_RELATIONS
            or not any(entity in members[cited].entities for cited in action.cites)
        ):
            raise PlanRefused("an entity end is a canonical entity a cited member names, linked about")
        if action.kind in ("merge", "link") and (
            not action.target or not action.other or action.target == action.other
        ):
            raise PlanRefused(f"a {action.kind} joins two distinct members")
        if action.kind in ("update", "archive") and not action.target:
            raise PlanRefused(f"an {action.kind} names its member")
        if action.kind == "link" and action.relation not in LINK_RELATIONS:
            raise PlanRefused(f"unknown relation {action.relation!r}")
        if action.kind == "update" and (
            not action.fields or set(action.fields) - set(Memory.CHANGEABLE_FIELDS)
        ):
            raise PlanRefused("an update changes only a memory's changeable fields")
        if action.kind == "create" and set(action.fields) - set(Memory.PROPOSED_FIELDS):
            raise PlanRefused("a create sets only memory fields")
        if action.kind == "create" and any(
            action.fields.get(name, value) != value
            for name, value in (
                ("subject", frozen.subject),
                ("scope", frozen.scope),
                ("type", frozen.memory_type),
            )
        ):
            raise PlanRefused("a create stays in its window's subject, scope and type")
        changes = {"merge": [action.other], "update": [action.target], "archive": [action.target]}.get(
            action.kind, []
        )
        keeps = {"merge": [action.target], "link": [action.target, *([] if entity else [action.other])]}.get(
            action.kind, []
        )
        if set(changes) & (changed | kept) or set(keeps) & changed:
            raise PlanRefused("a member is changed by at most one action, and never one another action keeps")
        changed |= set(changes)
        kept |= set(keeps)
    return actions


def high_risk(frozen: FrozenWindow, action: Action) -> bool:
    """Server-side risk: contradiction updates, merges of people, anything restricted."""
    members = frozen.members
    touched = [members[i] for i in {*action.cites, action.target, action.other} if i in members]
    if any(m.sensitivity == Memory.Sensitivity.RESTRICTED for m in touched):
        return True
    if action.fields.get("sensitivity") == Memory.Sensitivity.RESTRICTED:
        return True
    return action.kind == "update" or (action.kind == "merge" and frozen.memory_type in HIGH_RISK_MERGE_TYPES)
