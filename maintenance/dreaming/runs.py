"""Bounded Dreaming's runs: freeze windows, check a planner's plan, propose it as the system agent.

The plan is re-validated (``maintenance.dreaming.checks``) and, in one
transaction that first checks that no member moved, becomes the run and its
proposals; a moved member makes the run ``stale`` with zero proposals. The
executor checks the window again before each action (``executor.dreaming``).
"""

import logging
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.canonical import digest
from core.errors import DomainError
from evidence.models import EvidenceRevision
from maintenance.dreaming.checks import check_plan, high_risk
from maintenance.dreaming.planner import ENTITY_END, Action, Planner, planner
from maintenance.dreaming.windows import FrozenWindow, select_windows
from memory_core.models import Memory
from proposals.models import DreamingRun, Proposal
from proposals.payloads import ProposalPayload
from proposals.policy import active_rule_set
from proposals.services.submission import create_proposal
from tenancy.models import Tenant
from tenancy.services import system_agent

logger = logging.getLogger(__name__)


@dataclass
class PassResult:
    windows: int = 0
    runs: int = 0
    proposals: int = 0
    stale: int = 0
    refused: int = 0


def dreaming_pass(
    *, tenant_id: Any = None, limit: int = 50, scan: int = 20000, chosen: Planner | None = None
) -> PassResult:
    """Freeze and plan about ``limit`` windows (of one tenant, if named); propose what they plan.

    Each tenant resumes where its last pass stopped reading (a keyset cursor in
    the shared cache that wraps at the end), like the dormancy sweep.
    """
    result = PassResult()
    tenants = Tenant.objects.order_by("id").values_list("id", flat=True)
    if tenant_id is not None:
        tenants = tenants.filter(id=tenant_id)
    for tenant in tenants:
        key = f"dreaming:cursor:{tenant}"
        after, read = cache.get(key), 0
        while result.windows < limit and read < scan:
            windows, after, rows = select_windows(
                tenant_id=tenant, limit=limit - result.windows, scan=scan - read, after=after
            )
            read += rows
            for window in windows:
                result.windows += 1
                run = run_window(window, chosen=chosen)
                if run is None:
                    continue
                result.runs += 1
                result.proposals += sum(len(action.get("proposals", [])) for action in run.plan)
                result.stale += run.closed == DreamingRun.Closed.STALE
                result.refused += run.closed == DreamingRun.Closed.REFUSED
            if after is None:
                break
        cache.set(key, after, timeout=None)
        if result.windows >= limit:
            break
    return result


def run_window(frozen: FrozenWindow, *, chosen: Planner | None = None) -> DreamingRun | None:
    """Plan the frozen window, check the plan, and propose it; None if there was nothing (new) to do.

    A plan the server refuses is recorded as a ``refused`` run with zero proposals.
    """
    if DreamingRun.objects.filter(tenant_id=frozen.tenant_id, window_digest=frozen.digest).exists():
        return None  # this exact window (members at these revisions) was planned already
    chosen = chosen or planner()
    try:
        actions = chosen.plan(frozen.window)
    except Exception as failure:  # a plugged-in planner's failure refuses its window, not the pass
        logger.warning(
            "dreaming planner %s failed on a window", getattr(chosen, "name", chosen), exc_info=True
        )
        return _record(
            frozen, chosen, [], closed=DreamingRun.Closed.REFUSED, reason=f"planner failed: {failure!r}"
        )
    if not actions:
        return None
    try:
        checked = check_plan(frozen, actions)
        return submit_plan(frozen, chosen, checked)
    except DomainError as refusal:
        return _record(frozen, chosen, actions, closed=DreamingRun.Closed.REFUSED, reason=str(refusal))


def submit_plan(frozen: FrozenWindow, chosen: Planner, actions: list[Action]) -> DreamingRun:
    """Record the run and propose its actions, or record it stale if a member moved since freezing."""
    try:
        return _submit(frozen, chosen, actions)
    except IntegrityError:
        existing = DreamingRun.objects.filter(tenant_id=frozen.tenant_id, window_digest=frozen.digest).first()
        if existing is None:
            raise
        return existing


@transaction.atomic(durable=True)
def _submit(frozen: FrozenWindow, chosen: Planner, actions: list[Action]) -> DreamingRun:
    moved = window_moved(frozen)
    if moved:
        return _create_run(frozen, chosen, actions, closed=DreamingRun.Closed.STALE, reason=moved)
    run = _create_run(frozen, chosen, actions)
    agent = system_agent(tenant_id=frozen.tenant_id)
    plan = []
    for index, action in enumerate(actions):
        made = []
        for step, payload in enumerate(_payloads(frozen, run, action)):
            key = f"dreaming:{run.pk}:{index}:{step}"
            proposal = create_proposal(
                agent=agent, idempotency_key=key, payload=payload, request_hash=digest({"key": key})
            )
            made.append(str(proposal.pk))
        plan.append({**action.as_json(), "high_risk": high_risk(frozen, action), "proposals": made})
    run.plan = plan
    run.save(update_fields=["plan"])
    return run


def window_moved(frozen: FrozenWindow) -> str:
    """Why the frozen window no longer holds ("" if it does): lock the members, compare, check evidence."""
    members = frozen.members
    rows = {
        str(pk): (revision, state)
        for pk, revision, state in Memory.objects.select_for_update()
        .filter(tenant_id=frozen.tenant_id, pk__in=list(members))
        .order_by("pk")
        .values_list("pk", "revision", "state")
    }
    for memory_id, member in sorted(members.items()):
        if rows.get(memory_id) != (member.revision, Memory.State.ACTIVE):
            now = rows.get(memory_id)
            return f"member {memory_id} moved after freezing: frozen at revision {member.revision}, now {now}"
    frozen_evidence = {e for m in members.values() for e in m.evidence}
    invalid = (
        EvidenceRevision.objects.filter(pk__in=frozen_evidence)
        .exclude(status=EvidenceRevision.Status.VALID)
        .values_list("pk", flat=True)
        .first()
    )
    return f"evidence revision {invalid} of the window is no longer valid" if invalid else ""


def _create_run(
    frozen: FrozenWindow, chosen: Planner, actions: list, *, closed: str = "", reason: str = ""
) -> DreamingRun:
    return DreamingRun.objects.create(
        tenant_id=frozen.tenant_id,
        trigger=frozen.window.trigger,
        subject_kind=frozen.subject["kind"],
        subject_id=frozen.subject["id"],
        scope=frozen.scope,
        memory_type=frozen.memory_type,
        members=[
            {"memory_id": m.memory_id, "revision": m.revision, "evidence": list(m.evidence)}
            for m in frozen.window.members
        ],
        window_digest=frozen.digest,
        planner=getattr(chosen, "name", type(chosen).__name__)[:64],
        planner_version=str(getattr(chosen, "version", ""))[:32],
        policy_fingerprint=active_rule_set().fingerprint,
        registration_version=frozen.registration_version,
        budget=frozen.window.budget,
        mode=frozen.mode,
        plan=[a.as_json() if isinstance(a, Action) else {"refused": repr(a)[:200]} for a in actions[:20]]
        if isinstance(actions, list)
        else [],
        closed=closed,
        closed_reason=reason,
        closed_at=timezone.now() if closed else None,
    )


@transaction.atomic(durable=True)
def _record(frozen: FrozenWindow, chosen: Planner, actions: Any, *, closed: str, reason: str) -> DreamingRun:
    return _create_run(
        frozen, chosen, actions if isinstance(actions, list) else [], closed=closed, reason=reason
    )


def _payloads(frozen: FrozenWindow, run: DreamingRun, action: Action) -> list[ProposalPayload]:
    """The proposals one action becomes: a merge is a supersedes link, then the duplicate's dormancy."""
    members = frozen.members
    risky = high_risk(frozen, action)
    common: dict[str, Any] = {
        "policy_context": {"risk_level": "high" if risky else "low"},
        "rationale": f"Dreaming run {run.pk} ({frozen.window.trigger}): {action.kind} - {action.reason}"[
            :2000
        ],
        "dreaming_run": run,
        "dreaming_high_risk": risky,
    }
    cited_evidence = sorted(
        {e for memory_id in action.cites for e in members[memory_id].evidence},
    )
    bindings = [frozen.bindings[e] for e in cited_evidence if e in frozen.bindings]

    def retire(memory_id: str, why: str) -> ProposalPayload:
        member = members[memory_id]
        return {
            "action": Proposal.Action.DORMANT,
            "memory_id": member.memory_id,
            "base_revision": member.revision,
            "reason": f"dreaming run {run.pk}: {why}",
            **common,  # type: ignore[typeddict-item]
        }

    def link(source: str, target: str, relation: str) -> ProposalPayload:
        end: dict[str, Any] = (
            {"to_entity_id": target.removeprefix(ENTITY_END)}
            if target.startswith(ENTITY_END)
            else {"to_memory_id": target, "to_revision": members[target].revision}
        )
        return {
            "action": Proposal.Action.LINK,
            "memory_id": members[source].memory_id,
            "base_revision": members[source].revision,
            "link": {**end, "relation": relation},
            **common,  # type: ignore[typeddict-item]
        }

    if action.kind == "merge":
        return [
            link(action.target, action.other, "supersedes"),
            retire(action.other, f"merged into {action.target}"),
        ]
    if action.kind == "archive":
        return [retire(action.target, "archived")]
    if action.kind == "link":
        return [link(action.target, action.other, action.relation)]
    if action.kind == "update":
        member = members[action.target]
        return [
            {
                "action": Proposal.Action.UPDATE,
                "memory_id": member.memory_id,
                "base_revision": member.revision,
                "changes": action.fields,
                "evidence": bindings,
                **common,  # type: ignore[typeddict-item]
            }
        ]
    memory = {**action.fields, "subject": frozen.subject, "scope": frozen.scope, "type": frozen.memory_type}
    return [{"action": Proposal.Action.CREATE, "memory": memory, "evidence": bindings, **common}]  # type: ignore[typeddict-item]


def withdraw_open_actions(run: DreamingRun) -> int:
    """Withdraw a stale run's actions still waiting for reviewers (in the caller's transaction).

    Custodian submitted them, so Custodian withdraws them: the window they
    rest on moved, and no reviewer should spend time on an action the
    executor would refuse anyway. Released ones are left to the executor,
    which refuses them ``stale`` with a receipt.
    """
    waiting = (
        Proposal.objects.select_for_update()
        .filter(
            dreaming_run=run,
            status__in=[Proposal.Status.PENDING_REVIEW, Proposal.Status.CHANGES_REQUESTED],
        )
        .order_by("pk")
    )
    withdrawn = 0
    for proposal in waiting:
        proposal.transition_to(Proposal.Status.WITHDRAWN)
        proposal.outcome = "stale"
        proposal.save(update_fields=["status", "outcome", "updated_at"])
        withdrawn += 1
    return withdrawn
