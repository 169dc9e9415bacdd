"""Proposals and Dreaming runs as an agent reads them: in the view the read policy gives it.

A proposal's frozen fields, rationale and policy context are content: they
are shown in the view the caller gets for the memory the proposal asserts,
the strictest of the proposed memory and the target memory as it is now
(``memory_core.people``, the rule the admin follows for people). The
caller's context is its read context (``acting_for``, ``data_zone``), checked
against its grants when it is read; the submitter has no exception. ``deny``
(an external zone) shows a proposal as metadata only rather than hiding it,
so a list stays one row per proposal.

Proposals that assert no memory (a registration publish, entity create,
merge and unmerge) are shown raw to the tenant's agents under
``TENANT_RECORD``: registrations and canonical entities are the tenant's
shared configuration and vocabulary, which the read policy has no rule for.
A reviewer deciding a proposal reads it raw (``DECIDER``), as the review
page shows it. Anything presented without a view is shown metadata only.
"""

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memory_core.models import Memory
from memory_core.people import FROZEN_METADATA, frozen_fields_as_read, proposed_memory, strictest_rule
from memory_core.read_policy import ReadRule
from memory_core.return_modes import MASK
from proposals.models import DreamingRun, Proposal
from proposals.selectors import PolicyReads
from tenancy.models import Agent

TENANT_RECORD = ReadRule("read-tenant-record", "raw", {})
DECIDER = ReadRule("review-decider", "raw", {})
UNRESOLVED = ReadRule("read-unresolved", "metadata_only", {})
NOT_A_MEMORY = (Proposal.Action.REGISTER, *Proposal.ENTITY_ACTIONS)
# Targets that exist only once the proposal itself applied (a server-assigned id).
NEW_TARGETS = (Proposal.Action.CREATE, Proposal.Action.COMPACT)
# Policy context keys that are metadata; the rest (chat, session, task ids, consent wording) are not.
CONTEXT_METADATA = ("acting_for_subject", "data_zone", "risk_level", "requested_action", "actor_agent")


@dataclass(frozen=True)
class ReadView:
    """The view a proposal is shown in, and the memory whose view it is."""

    rule: ReadRule
    proposed: Memory | None = None

    @property
    def mode(self) -> str:
        return "metadata_only" if self.rule.mode == "deny" else self.rule.mode


def submitted_context(proposal: Proposal, *, fresh: bool, grants: PolicyReads) -> dict:
    """Return the read context of what was just sent with ``proposal`` (its policy context).

    A fresh submission's subject was checked against the agent's grants in
    this request; a replay's is checked again (``grants``), and read as no
    subject once the grant is gone.
    """
    frozen = proposal.policy_context or {}
    context = {key: frozen[key] for key in ("acting_for_subject", "data_zone") if frozen.get(key)}
    subject = context.get("acting_for_subject")
    if subject and not fresh and not grants.may_act_for(grants.agent, subject):
        del context["acting_for_subject"]
    return context


def attach_submitted_views(agent: Agent, submitted: Iterable[tuple[Proposal, bool]]) -> None:
    """Give each ``(proposal, replayed)`` ``agent`` just submitted the view of what it sent with it."""
    submitted = list(submitted)
    current = target_memories(proposal for proposal, _ in submitted)
    grants = PolicyReads(agent)  # a batch's replays: their grants in one read
    subjects = [(p.policy_context or {}).get("acting_for_subject") for p, again in submitted if again]
    grants.load(subjects=subjects, bindings=[])
    for proposal, replayed in submitted:
        context = submitted_context(proposal, fresh=not replayed, grants=grants)
        proposal.read_view = read_view(proposal, tenant_target(proposal, current), context)  # type: ignore[attr-defined]


def target_memories(proposals: Iterable[Proposal]) -> dict[uuid.UUID, Memory]:
    """Return the current target memories of ``proposals``, with their fences: one query, or none."""
    ids = {
        proposal.target_id
        for proposal in proposals
        if proposal.action not in NOT_A_MEMORY
        and proposal.action != Proposal.Action.ERASE
        and (proposal.action not in NEW_TARGETS or proposal.status == Proposal.Status.APPLIED)
    }
    if not ids:
        return {}
    return {memory.pk: memory for memory in Memory.objects.with_fence().filter(pk__in=ids)}


def attach_views(proposals: Iterable[Proposal], context: dict) -> list[Proposal]:
    """Give each proposal the ``read_view`` a caller with ``context`` gets (one query per call)."""
    proposals = list(proposals)
    current = target_memories(proposals)
    for proposal in proposals:
        proposal.read_view = read_view(proposal, tenant_target(proposal, current), context)  # type: ignore[attr-defined]
    return proposals


def tenant_target(proposal: Proposal, current: dict[uuid.UUID, Memory]) -> Memory | None:
    """The proposal's target now, if it is in the proposal's tenant (another tenant's id is no target)."""
    memory = current.get(proposal.target_id)
    return memory if memory is not None and memory.tenant_id == proposal.tenant_id else None


def attach_decider_views(proposals: Iterable[Proposal]) -> list[Proposal]:
    """Give each proposal of a reviewer's queue the decider's view (raw, as the review page)."""
    proposals = list(proposals)
    for proposal in proposals:
        proposal.read_view = ReadView(DECIDER)  # type: ignore[attr-defined]
    return proposals


def read_view(proposal: Proposal, current: Memory | None, context: dict) -> ReadView:
    """Return the view of ``proposal`` for ``context``: the strictest of what it asserts and its target."""
    if proposal.action in NOT_A_MEMORY:
        return ReadView(TENANT_RECORD)
    fields = proposal.fields or {}
    if proposal.action == Proposal.Action.ERASE:  # read as a restricted memory about the subject would be
        fields = {"subject": (fields.get("erasure") or {}).get("subject"), "sensitivity": "restricted"}
        return ReadView(strictest_rule(context, proposed_memory(fields=fields, facts={}, current=None)))
    if proposal.action == Proposal.Action.COMPACT:
        fields = fields.get("memory") or {}
    proposed = proposed_memory(fields=fields, facts=proposal.policy_facts or {}, current=current)
    return ReadView(strictest_rule(context, proposed, current), proposed)


def shown_proposal(data: dict, view: ReadView | None) -> dict:
    """Return a proposal's representation with its content in ``view`` (metadata only if none)."""
    view = view or ReadView(UNRESOLVED)
    data["view"], data["view_rule"] = view.mode, view.rule.id
    if view.mode == "raw":
        return data
    rule = ReadRule(view.rule.id, view.mode, view.rule.when)
    data["fields"] = frozen_fields_as_read(data.get("fields") or {}, view.proposed or Memory(), rule)
    data["evidence"] = []
    data["rationale"] = MASK if data.get("rationale") else ""
    context = data.get("policy_context") or {}
    data["policy_context"] = {key: context[key] for key in CONTEXT_METADATA if key in context}
    return data


def shown_content(proposal: Proposal, content: Any) -> Any:
    """Return memory content ``proposal`` carries (an observation's candidate) in its attached view."""
    view = getattr(proposal, "read_view", None) or ReadView(UNRESOLVED)
    if view.mode == "raw":
        return content
    rule = ReadRule(view.rule.id, view.mode, view.rule.when)
    return frozen_fields_as_read({"content": content}, view.proposed or Memory(), rule).get("content")


# Dreaming runs -------------------------------------------------------------------------------


def attach_run_views(runs: Iterable[DreamingRun], context: dict) -> list[DreamingRun]:
    """Give each run ``member_views`` (member id -> rule) for ``context``: one query for the page.

    A member no longer found (purged) is read as a restricted memory would be.
    """
    runs = list(runs)
    ids = {member_id for run in runs for member_id in run.member_ids}
    found = {str(m.pk): m for m in Memory.objects.with_fence().filter(pk__in=ids)} if ids else {}
    gone = proposed_memory(fields={}, facts={}, current=None)
    for run in runs:
        run.member_views = {  # type: ignore[attr-defined]
            member_id: strictest_rule(context, _member_now(found.get(member_id), run) or gone)
            for member_id in run.member_ids
        }
    return runs


def _member_now(memory: Memory | None, run: DreamingRun) -> Memory | None:
    return memory if memory is not None and memory.tenant_id == run.tenant_id else None


def shown_run(data: dict, member_views: dict[str, ReadRule] | None) -> dict:
    """Return a run's representation with each member, plan action and reason in the caller's view.

    A member's evidence shows only raw; a plan action shows its fields and
    reason only if every member it names is raw to the caller, the closing
    reason only if the whole window is. The window's subject, scope and type
    are metadata, as in a masked memory.
    """
    views = member_views or {}
    modes = {member_id: _mode(views.get(member_id)) for member_id in _ids(data.get("members") or [])}
    data["members"] = [_member(member, views) for member in data.get("members") or []]
    data["plan"] = [_plan_action(action, views) for action in data.get("plan") or []]
    whole = modes and all(mode == "raw" for mode in modes.values())
    data["view"] = _strictest(list(modes.values()) or ["metadata_only"])
    if not whole:
        data["closed_reason"] = MASK if data.get("closed_reason") else ""
    return data


def _ids(members: list) -> list[str]:
    return [str(member.get("memory_id")) for member in members if isinstance(member, dict)]


def _mode(rule: ReadRule | None) -> str:
    if rule is None or rule.mode == "deny":
        return "metadata_only"
    return rule.mode


def _strictest(modes: list[str]) -> str:
    order = ("raw", "summary", "masked", "metadata_only")
    return max(modes, key=order.index)


def _member(member: dict, views: dict[str, ReadRule]) -> dict:
    rule = views.get(str(member.get("memory_id")))
    shown = {"memory_id": member.get("memory_id"), "revision": member.get("revision"), "view": _mode(rule)}
    if _mode(rule) == "raw":
        shown["evidence"] = member.get("evidence", [])
    return shown


_PLAN_METADATA = ("kind", "cites", "target", "other", "relation", "high_risk", "proposals")


def _plan_action(action: Any, views: dict[str, ReadRule]) -> dict:
    if not isinstance(action, dict):
        return {"refused": MASK}
    named = {str(name) for name in [*(action.get("cites") or []), action.get("target"), action.get("other")]}
    modes = [_mode(views.get(name)) for name in named if name in views] or ["metadata_only"]
    if "refused" in action and set(action) == {"refused"}:
        modes = [_mode(rule) for rule in views.values()] or ["metadata_only"]
    if all(mode == "raw" for mode in modes):
        return action
    shown = {key: action[key] for key in _PLAN_METADATA if key in action}
    if "fields" in action:
        fields = action["fields"] or {}
        shown["fields"] = {key: value for key, value in fields.items() if key in FROZEN_METADATA}
    if "reason" in action or "refused" in action:
        shown["reason" if "reason" in action else "refused"] = MASK
    shown["view"] = _strictest(modes)
    return shown
