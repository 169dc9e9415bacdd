"""Bounded Dreaming's windows: which memories are planned together, frozen as they are now.

A window is 2-8 active memories of one tenant, subject, scope and type,
chosen by a trigger: members sharing a structured key (``dedupe_collision``),
members saying (almost) the same thing (``near_duplicate``), a subject+scope+
type over its registered capacity (``capacity``), or members naming one
canonical entity (``schedule``). Freezing records each member's revision and
the evidence it rests on, and the mode the type's registration fixes (never
the caller).
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from core.canonical import digest
from core.errors import DomainError
from maintenance.dreaming.planner import (
    MAX_GROUP,
    Member,
    Window,
    near_duplicate_clusters,
    normalised,
    structured,
    unlinked_entities,
)
from memory_core.entities import canonical, known_entities
from memory_core.entity_resolution import normalise
from memory_core.models import Memory, MemoryEvidence, MemoryLink
from proposals.models import DreamingRun, Proposal
from registrations.document import DEFAULT_DREAMING_MODE
from registrations.selectors import active_registration


class WindowRefused(DomainError):
    code = "dreaming_window_invalid"
    status = 422
    title = "A Dreaming window is 2-8 active memories of one tenant, subject, scope and type"


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


Cluster = tuple[str, list[Member]]  # (trigger, members), before it is cut into windows
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
    entry = registration.entry(group[0][5])
    capacity = entry["capacity"]["per_subject_scope"]
    relations = tuple(entry.get("links", {}).get("relations", []))
    clusters, placed = _key_collisions(members)
    clusters += _duplicates([m for m in members if m.memory_id not in placed])
    if not clusters:
        clusters = _over_capacity_or_entities(members, capacity, relations, entities)
    return [
        frozen
        for trigger, cluster in clusters
        for frozen in _cut_into_windows(tenant_id, trigger, cluster, registration, entities)
    ]


def _key_collisions(members: list[Member]) -> tuple[list[Cluster], set[str]]:
    """Members sharing a structured key, each in the first such cluster (by key); and who was placed."""
    by_key: dict[str, list[Member]] = defaultdict(list)
    for member in members:
        for key in structured(member.content):
            by_key[key].append(member)
    clusters: list[Cluster] = []
    placed: set[str] = set()
    for key in sorted(by_key):
        found = [m for m in by_key[key] if m.memory_id not in placed]
        if len(found) > 1:
            clusters.append((DreamingRun.Trigger.DEDUPE_COLLISION, found))
            placed |= {m.memory_id for m in found}
    return clusters, placed


def _duplicates(members: list[Member]) -> list[Cluster]:
    """Members saying the same (normalised) statement, then near-duplicates among the others."""
    by_text: dict[str, list[Member]] = defaultdict(list)
    for member in members:
        by_text[normalised(str(member.content.get("statement", "")))].append(member)
    clusters: list[Cluster] = []
    rest = []
    for same in by_text.values():
        if len(same) > 1:
            clusters.append((DreamingRun.Trigger.NEAR_DUPLICATE, same))
        else:
            rest.append(same[0])
    clusters += [(DreamingRun.Trigger.NEAR_DUPLICATE, near) for near in near_duplicate_clusters(rest)]
    return clusters


def _over_capacity_or_entities(
    members: list[Member], capacity: int | None, relations: tuple, entities: list[tuple[str, str]]
) -> list[Cluster]:
    """With nothing to deduplicate: a group over its capacity, else members naming an entity unlinked."""
    if capacity and len(members) > capacity:
        return [(DreamingRun.Trigger.CAPACITY, members[: DreamingRun.MAX_WINDOW])]
    if entities and "about" in relations and len(members) <= DreamingRun.MAX_WINDOW:
        named = _with_about_links([_with_entities(m, entities) for m in members])
        if unlinked_entities(named):
            return [(DreamingRun.Trigger.SCHEDULE, named)]
    return []


def _cut_into_windows(
    tenant_id, trigger: str, cluster: list[Member], registration, entities: list[tuple[str, str]]
) -> list[FrozenWindow]:
    """Freeze a cluster in windows of at most ``MAX_WINDOW`` members (a remainder of one is left out)."""
    windows = []
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
