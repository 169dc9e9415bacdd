"""Bounded Dreaming: choose windows, freeze them, check a planner's plan, propose it as the system agent.

A window is 2-8 active memories of one tenant, subject, scope and type,
chosen by a trigger: members sharing a structured key (``dedupe_collision``),
members saying (almost) the same thing (``near_duplicate``), a subject+scope+
type over its registered capacity (``capacity``), or members naming one
canonical entity (``schedule``). Freezing records each member's revision and
the evidence it rests on, the planner, the policy fingerprint, the budget and
the mode the type's registration fixes (never the caller). The plan is
re-validated here (``check_plan``) and, in one transaction that first checks
that no member moved, becomes the run and its proposals; a moved member makes
the run ``stale`` with zero proposals. The executor checks the window again
before each action (``executor.dreaming``).
"""

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from core.canonical import digest
from core.errors import DomainError
from evidence.models import EvidenceRevision
from memory_core.entities import canonical, known_entities
from memory_core.entity_resolution import normalise
from memory_core.models import Memory, MemoryEvidence, MemoryLink
from proposals.dreaming import (
    ENTITY_END,
    KINDS,
    MAX_GROUP,
    Action,
    Member,
    Planner,
    Window,
    near_duplicate_clusters,
    normalised,
    planner,
    structured,
    unlinked_entities,
)
from proposals.models import DreamingRun, Proposal
from proposals.payloads import ProposalPayload
from proposals.policy import active_rule_set
from proposals.services.submission import create_proposal
from registrations.document import DEFAULT_DREAMING_MODE, LINK_RELATIONS
from registrations.selectors import active_registration
from tenancy.models import Tenant
from tenancy.services import system_agent

logger = logging.getLogger(__name__)
HIGH_RISK_MERGE_TYPES = ("profile", "relationship")  # people: never merged without an owner


class WindowRefused(DomainError):
    code = "dreaming_window_invalid"
    status = 422
    title = "A Dreaming window is 2-8 active memories of one tenant, subject, scope and type"


class PlanRefused(DomainError):
    code = "dreaming_plan_refused"
    status = 422
    title = "The planner's plan oversteps its window, its budget or the five source-preserving kinds"


@dataclass(frozen=True)
class FrozenWindow:
    tenant_id: Any
    window: Window
    subject: dict
    scope: str
    memory_type: str
    mode: str
    registration_version: int
    bindings: dict[str, dict]  # evidence revision id -> binding, for the members' evidence

    @property
    def members(self) -> dict[str, Member]:
        return {member.memory_id: member for member in self.window.members}

    @property
    def digest(self) -> str:
        frozen = sorted((m.memory_id, m.revision) for m in self.window.members)
        return digest({"tenant": str(self.tenant_id), "members": frozen})


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


# Window selection --------------------------------------------------------------------------


_GROUP_COLUMNS = ("subject_kind", "subject_id", "scope", "type")
_READ_COLUMNS = (
    "id",
    "revision",
    *_GROUP_COLUMNS,
    "sensitivity",
    "content",
    "created_at",
    "valid_to",
)


def select_windows(
    *, tenant_id: Any, limit: int, scan: int, after: tuple | None = None
) -> tuple[list[FrozenWindow], tuple | None, int]:
    """Read at most ``scan`` active memories in group order after ``after``; return frozen windows
    (about ``limit``: whole groups only), the key to resume from (None: the end was reached) and
    how many rows were read.

    Members already in a run with open proposals are left out, and one pass
    never puts a memory in two windows. A group larger than ``MAX_GROUP`` is
    read in parts: the pass stops after its first part and the next resumes
    inside it, so neither a large group nor windows already planned starve
    those behind them.
    """
    if limit <= 0:
        return [], after, 0
    registration = active_registration(tenant_id=tenant_id)
    busy = _members_of_open_runs(tenant_id)
    rows = Memory.objects.filter(tenant_id=tenant_id, state=Memory.State.ACTIVE)
    if after is not None:
        rows = rows.filter(_after(after))
    entities = _entity_names(tenant_id)
    windows: list[FrozenWindow] = []
    group: list[tuple] = []
    read, resume = 0, None
    for row in rows.order_by(*_GROUP_COLUMNS, "id").values_list(*_READ_COLUMNS)[:scan].iterator(2000):
        read += 1
        if group and row[2:6] != group[0][2:6]:
            windows += _group_windows(tenant_id, group, registration, entities)
            resume = _key(group[-1])
            group = []
            if len(windows) >= limit:
                return _with_evidence(windows), resume, read
        if str(row[0]) not in busy:
            group.append(row)
        if len(group) >= MAX_GROUP:  # the rest of this group waits for the next pass
            windows += _group_windows(tenant_id, group, registration, entities)
            return _with_evidence(windows), _key(row), read
    if group:
        windows += _group_windows(tenant_id, group, registration, entities)
    return _with_evidence(windows), (_key(row) if read == scan else None), read


def _key(row: tuple) -> tuple:
    return (*row[2:6], str(row[0]))


def _after(key: tuple) -> Q:
    """Rows after ``key`` in (subject_kind, subject_id, scope, type, id) order."""
    columns = (*_GROUP_COLUMNS, "id")
    after = Q()
    for i, column in enumerate(columns):
        step = Q(**{f"{column}__gt": key[i]}) & Q(**{c: key[j] for j, c in enumerate(columns[:i])})
        after = step if i == 0 else after | step
    return after


def _members_of_open_runs(tenant_id: Any) -> set[str]:
    runs = DreamingRun.objects.filter(
        tenant_id=tenant_id, closed="", proposals__status__in=Proposal.OPEN_STATUSES
    ).distinct()
    return {member["memory_id"] for members in runs.values_list("members", flat=True) for member in members}


def _entity_names(tenant_id: Any) -> list[tuple[str, str]]:
    """(normalised name, canonical entity id) for the tenant's entities and every alias (at most 500)."""
    entities = known_entities(tenant_id=tenant_id)
    by_id = {entity.pk: entity for entity in entities}
    return [
        (f" {normalise(name)} ", str(canonical(entity, by_id).pk))
        for entity in entities
        for name in entity.names
        if normalise(name)
    ]


def _group_windows(tenant_id, group: list[tuple], registration, entities) -> list[FrozenWindow]:
    """Cluster one subject+scope+type: shared structured keys, then (near-)duplicate statements."""
    members = [_member(row) for row in group]
    clusters: list[tuple[str, list[Member]]] = []
    placed: set[str] = set()
    by_key: dict[str, list[Member]] = defaultdict(list)
    for member in members:
        for key in structured(member.content):
            by_key[key].append(member)
    for key in sorted(by_key):
        found = [m for m in by_key[key] if m.memory_id not in placed]
        if len(found) > 1:
            clusters.append((DreamingRun.Trigger.DEDUPE_COLLISION, found))
            placed |= {m.memory_id for m in found}
    by_text: dict[str, list[Member]] = defaultdict(list)
    for member in members:
        if member.memory_id not in placed:
            by_text[normalised(str(member.content.get("statement", "")))].append(member)
    rest = []
    for same in by_text.values():
        if len(same) > 1:
            clusters.append((DreamingRun.Trigger.NEAR_DUPLICATE, same))
            placed |= {m.memory_id for m in same}
        else:
            rest.append(same[0])
    for near in near_duplicate_clusters(rest):
        clusters.append((DreamingRun.Trigger.NEAR_DUPLICATE, near))
    memory_type = group[0][5]
    entry = registration.entry(memory_type)
    capacity = entry["capacity"]["per_subject_scope"]
    if not clusters and capacity and len(members) > capacity:
        clusters.append((DreamingRun.Trigger.CAPACITY, members[: DreamingRun.MAX_WINDOW]))
    relations = tuple(entry.get("links", {}).get("relations", []))
    if not clusters and entities and "about" in relations and len(members) <= DreamingRun.MAX_WINDOW:
        named = _with_about_links([_with_entities(m, entities) for m in members])
        if unlinked_entities(named):
            clusters.append((DreamingRun.Trigger.SCHEDULE, named))
    windows = []
    for trigger, cluster in clusters:
        for start in range(0, len(cluster), DreamingRun.MAX_WINDOW):
            chunk = cluster[start : start + DreamingRun.MAX_WINDOW]
            if len(chunk) >= DreamingRun.MIN_WINDOW:
                if entities and not any(m.entities for m in chunk):  # (a schedule window has them)
                    chunk = _with_about_links([_with_entities(m, entities) for m in chunk])
                windows.append(_frozen(tenant_id, trigger, chunk, registration))
    return windows


def _member(row: tuple) -> Member:
    memory_id, revision, subject_kind, subject_id, scope, memory_type, sensitivity, content, created, to = row
    return Member(
        memory_id=str(memory_id),
        revision=revision,
        type=memory_type,
        scope=scope,
        subject={"kind": subject_kind, "id": subject_id},
        sensitivity=sensitivity,
        content=content,
        created_at=created.isoformat(),
        valid_to=to.isoformat() if to else None,
    )


def _with_entities(member: Member, entities: list[tuple[str, str]]) -> Member:
    text = f" {normalise(str(member.content.get('statement', '')))} "
    named = tuple(sorted({entity for name, entity in entities if name in text}))
    return Member(**{**member.__dict__, "entities": named})


def _with_about_links(members: list[Member]) -> list[Member]:
    """Add the entities each member already links ``about`` (one hop to a merge's winner; one query)."""
    about: dict[str, set[str]] = defaultdict(set)
    rows = MemoryLink.objects.filter(
        source_id__in=[m.memory_id for m in members], target_entity__isnull=False
    ).values_list("source_id", "target_entity_id", "target_entity__redirect_to_id")
    for source, entity, winner in rows:
        about[str(source)].add(str(winner or entity))
    return [Member(**{**m.__dict__, "about": tuple(sorted(about[m.memory_id]))}) for m in members]


def _frozen(tenant_id, trigger: str, members: list[Member], registration) -> FrozenWindow:
    memory_type = members[0].type
    entry = registration.entry(memory_type)
    return FrozenWindow(
        tenant_id=tenant_id,
        window=Window(
            trigger=str(trigger),
            members=tuple(members),
            budget=DreamingRun.MAX_BUDGET,
            relations=tuple(entry.get("links", {}).get("relations", [])),
        ),
        subject=members[0].subject,
        scope=members[0].scope,
        memory_type=memory_type,
        mode=entry.get("dreaming", {}).get("mode", DEFAULT_DREAMING_MODE),
        registration_version=registration.version,
        bindings={},
    )


def _with_evidence(windows: list[FrozenWindow]) -> list[FrozenWindow]:
    """Add each member's evidence (its current revision's) to the frozen windows (one query per 5,000)."""
    revisions = {m.memory_id: m.revision for frozen in windows for m in frozen.window.members}
    if not revisions:
        return windows
    evidence: dict[str, list[str]] = defaultdict(list)
    bindings: dict[str, dict] = {}
    ids = list(revisions)
    for start in range(0, len(ids), 5000):  # bounded IN lists at 100k memories
        rows = MemoryEvidence.objects.filter(memory_id__in=ids[start : start + 5000])
        for row in rows.select_related("evidence_revision").order_by("evidence_revision_id"):
            if revisions[str(row.memory_id)] == row.memory_revision:
                evidence[str(row.memory_id)].append(str(row.evidence_revision_id))
                bindings[str(row.evidence_revision_id)] = dict(row.evidence_revision.binding())
    frozen_windows = []
    for frozen in windows:
        members = tuple(
            Member(**{**m.__dict__, "evidence": tuple(evidence[m.memory_id])}) for m in frozen.window.members
        )
        window = Window(frozen.window.trigger, members, frozen.window.budget, frozen.window.relations)
        cited = {e: bindings[e] for m in members for e in m.evidence}
        frozen_windows.append(FrozenWindow(**{**frozen.__dict__, "window": window, "bindings": cited}))
    return frozen_windows


def freeze_window(*, tenant_id: Any, trigger: str, memory_ids: Iterable[Any]) -> FrozenWindow:
    """Freeze the named memories as one window, or refuse: 2-8, active, one tenant, subject, scope, type."""
    ids = list(dict.fromkeys(str(memory_id) for memory_id in memory_ids))
    if not DreamingRun.MIN_WINDOW <= len(ids) <= DreamingRun.MAX_WINDOW:
        raise WindowRefused(f"a window has 2 to 8 members, not {len(ids)}")
    if trigger not in DreamingRun.Trigger.values:
        raise WindowRefused(f"unknown trigger {trigger}")
    rows = list(
        Memory.objects.filter(tenant_id=tenant_id, state=Memory.State.ACTIVE, pk__in=ids)
        .order_by("id")
        .values_list(*_READ_COLUMNS)
    )
    if len(rows) != len(ids):
        raise WindowRefused("every member is an active memory of this tenant")
    if len({row[2:6] for row in rows}) != 1:
        raise WindowRefused("the members are about one subject, in one scope, of one type")
    registration = active_registration(tenant_id=tenant_id)
    frozen = _frozen(tenant_id, trigger, [_member(row) for row in rows], registration)
    entities = _entity_names(tenant_id)
    if entities:
        members = tuple(_with_entities(m, entities) for m in frozen.window.members)
        window = Window(frozen.window.trigger, members, frozen.window.budget, frozen.window.relations)
        frozen = FrozenWindow(**{**frozen.__dict__, "window": window})
    return _with_evidence([frozen])[0]


# Planning and checking ---------------------------------------------------------------------


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


# Submission --------------------------------------------------------------------------------


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
