"""Governed reads: recall (search) and get, each leaving one access event.

These are reads that write an audit row, so every outcome is recorded,
including denied and not-found reads. Policy decides per item before the
page is cut: denied items never take a result slot, and the caller learns
neither how many there were nor where they sat (the cursor is the recall id;
the scan position stays on the server).
"""

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone

from core.errors import DomainError
from core.keyed import keyed_digest
from core.replica import on_primary
from memory_core.episodes import neighbours as episode_neighbours
from memory_core.first_stage import POOL, FirstStage, first_stage
from memory_core.links import linked_context
from memory_core.models import (
    AccessEvent,
    AccessEventItem,
    Memory,
    MemoryLink,
    MemoryReads,
)
from memory_core.ranking import WINDOW, Scored, SearchRanking, occurred_at_of, rerank, weights_for
from memory_core.read_policy import active_read_policy
from memory_core.return_modes import matched_terms, present
from memory_core.search import ranked
from memory_core.selectors import MemoryNotFound, current_evidence, lineage_of
from memory_core.statements import instant, normalised_statement
from registrations.selectors import active_registration
from tenancy.models import Agent

MAX_SCAN = 2000
# What a window reads of each candidate: what the read policy and ranking decide on, and an
# event's ``occurred_at`` (annotated by ``_window``). Content and the other columns are read after,
# for the items served and those shown other than raw (ranking matches on the text they show):
# at a million memories, shipping and decoding every candidate's content cost ~6 ms a window.
WINDOW_COLUMNS = (
    "id",
    "tenant_id",
    "subject_kind",
    "subject_id",
    "scope",
    "type",
    "sensitivity",
    "confidence",
    "expires_at",
    "valid_from",
    "valid_to",
    "state",
    "revision",
    "created_at",
    "updated_at",
    "episode",
)
# The views ranking needs no content for: raw ranks on the window's BM25 rank and occurred_at
# column, masked and metadata-only show no text to match; a summary view matches on its summary.
RANKED_WITHOUT_CONTENT = ("deny", "raw", "metadata_only", "masked")
SHOWN_STATEMENT = ("raw", "summary")  # the views whose text says what the memory says
SEARCHABLE_STATES = (Memory.State.ACTIVE, Memory.State.EXPIRED, Memory.State.DORMANT)


class InvalidRecallCursor(DomainError):
    code = "invalid_cursor"
    status = 400
    title = "The cursor is not a recall id of this search"


@dataclass(frozen=True)
class RecallItem:
    memory: dict
    return_mode: str
    rule: str
    score: float
    matched_terms: list[str]
    explanation: dict
    context: dict | None = None
    links: list | None = None


@dataclass(frozen=True)
class RecallResult:
    recall_id: uuid.UUID
    items: list[RecallItem]
    next_cursor: uuid.UUID | None
    weights_version: str


@dataclass(frozen=True)
class RecallQuery:
    text: str = ""
    subject: dict | None = None
    scope: str = ""
    types: list[str] = field(default_factory=list)
    states: list[str] = field(default_factory=list)
    valid_at: datetime | None = None
    include_inactive: bool = False
    about_entity: uuid.UUID | None = None  # the requested entity (recorded); ``about`` holds its cluster
    about: tuple = ()
    dedupe_key: str = ""  # one key: the memory that holds it (and, with include_inactive, its predecessors)

    def as_json(self) -> dict:
        """Return the filters as the access event records them (the subject id only as a pseudonym)."""
        return {
            "subject": subject_pseudonym(self.subject) if self.subject else None,
            "scope": self.scope,
            "types": sorted(self.types),
            "states": sorted(self.states),
            "valid_at": self.valid_at.isoformat() if self.valid_at else None,
            "include_inactive": self.include_inactive,
            **({"about_entity": str(self.about_entity)} if self.about_entity else {}),
            **({"dedupe_key_hmac": dedupe_pseudonym(self.dedupe_key)} if self.dedupe_key else {}),
        }


def recall(
    *,
    agent: Agent,
    query: RecallQuery,
    context: dict,
    limit: int,
    cursor: uuid.UUID | None,
    neighbours: int = 0,
    links: int = 0,
) -> RecallResult:
    """Search the agent's tenant; return up to ``limit`` items in the views policy allows, best first.

    Lexical candidates come in windows of ``ranking.WINDOW``; each window is
    decided by the read policy and reranked by the hybrid score before the
    page is cut, so the cursor's offset is a position in that order. The
    windows follow the first stage (``memory_core.first_stage``: BM25, the
    turns beside the best hits and, with an embedder, meaning). With
    ``neighbours``, each hit brings up to that many memories before and after
    it in its episode (``memory_core.episodes``), each decided, shown and
    audited like a hit; with ``links``, up to that many memories linked to
    each hit, one hop (``memory_core.links``), the same way.
    """
    offset = _resume(agent, query, cursor)
    registration = active_registration(tenant_id=agent.tenant_id)
    policy, weights = active_read_policy(), weights_for(agent, registration)
    pool = _candidates(agent, query)
    candidates = ranked(pool, query.text, tenant_id=agent.tenant_id)
    first = None  # valid_at reads history rows: their windows stay in BM25 order
    if not query.valid_at:
        first = first_stage(
            candidates,
            pool,
            query.text,
            policy=policy,
            context=context,
            weights=weights.default,
            tenant_id=agent.tenant_id,
        )
    search = SearchRanking(query.text, weights, agent.tenant_id, registration, query.valid_at, first)
    rows: list[Scored] = []
    said: set[tuple[str, ...]] = set()
    omitted, scanned, exhausted = 0, 0, False
    while len(rows) < limit and scanned < MAX_SCAN:
        start = offset - offset % WINDOW
        window = [_as_memory(row) for row in _window(candidates, pool, first, start)]
        rules = [policy.decide(memory, context) for memory in window]
        _read_rest(
            [
                memory
                for memory, rule in zip(window, rules, strict=True)
                if rule.mode not in RANKED_WITHOUT_CONTENT
            ]
        )
        order = rerank(window, rules, search)
        for entry in order[offset - start :]:
            offset, scanned = offset + 1, scanned + 1
            if entry.rule.mode == "deny":
                omitted += 1
                continue
            if _restates(entry, said):
                continue
            rows.append(entry)
            if len(rows) == limit:
                break
        if len(window) < WINDOW and offset >= start + len(window):
            exhausted = True
            break
    _read_rest([entry.memory for entry in rows])
    served = [(entry.memory, entry.rule) for entry in rows]
    around, nearby, denied = _episode_context(served, pool, policy, context, neighbours)
    omitted += denied
    served += [pair for pk, pair in nearby.items() if pk not in {memory.id for memory, _ in served}]
    linked, link_ends, denied = linked_context(
        served[: len(rows)], pool, policy, context, links, as_memory=_as_memory
    )
    omitted += denied
    served += [
        pair
        for pk, pair in link_ends.items()
        if not isinstance(pk, tuple) and pk not in {memory.id for memory, _ in served}
    ]
    # Ranking read the evidence of the raw items it scored; only the context's need reading.
    evidence = {entry.memory.id: entry.evidence for entry in rows if entry.evidence is not None}
    evidence |= current_evidence([m for m, rule in served if rule.mode == "raw" and m.id not in evidence])

    def shown(memory: Memory, rule) -> dict:
        return present(memory, rule.mode, evidence=evidence.get(memory.id))

    items = [
        RecallItem(
            memory=shown(entry.memory, entry.rule),
            return_mode=entry.rule.mode,
            rule=entry.rule.id,
            score=entry.score,
            matched_terms=matched_terms(entry.memory, query.text, entry.rule.mode),
            explanation=entry.explanation,
            context=None
            if not neighbours
            else {
                side: [_neighbour_json(shown(*nearby[pk]), nearby[pk][1]) for pk in pks if pk in nearby]
                for side, pks in around.get(entry.memory.id, {"before": [], "after": []}).items()
            },
            links=None
            if not links
            else [
                {"relation": relation, "direction": direction, **_link_end_json(link_ends[end], shown)}
                for relation, direction, end in linked.get(entry.memory.id, [])
                if end in link_ends
            ],
        )
        for entry in rows
    ]
    version = weights.version(entry.memory.type for entry in rows)
    event = _record(
        agent,
        _Access(
            AccessEvent.Action.SEARCH,
            AccessEvent.Outcome.OK,
            fingerprint=policy.fingerprint,
            query=query,
            omitted=omitted,
            next_offset=None if exhausted else offset,
            ranking_version=version,
            registration_version=registration.version,
        ),
        context=context,
        served=served,
    )
    return RecallResult(event.id, items, None if exhausted else event.id, version)


def _restates(entry: Scored, said: set[tuple[str, ...]]) -> bool:
    """Has this answer already served a memory of the same subject saying the same, over the same period?

    Keys derived from statements keep new restatements out; this keeps the ones stored
    before them (or under different keys) from filling a page twice. The better-ranked
    one is served; views that show no statement are never collapsed.
    """
    memory = entry.memory
    if entry.rule.mode not in SHOWN_STATEMENT:
        return False
    statement = getattr(memory, "statement_text", None)
    if statement is None and "content" not in memory.get_deferred_fields():
        statement = (memory.content or {}).get("statement")
    if not isinstance(statement, str):
        return False
    key = (
        memory.subject_kind,
        memory.subject_id,
        normalised_statement(statement),
        instant(memory.valid_from),
        instant(memory.valid_to),
        instant(occurred_at_of(memory)),
    )
    if key in said:
        return True
    said.add(key)
    return False


def _window(candidates: QuerySet, pool: QuerySet, first: FirstStage | None, start: int) -> list:
    """The memories at [start, start + WINDOW) of the first stage's order, then of BM25's beyond it.

    The first stage's neighbours need not match the words, so its rows are read
    from the whole pool with the BM25 rank it found (0 for a neighbour); past its
    order the lexical candidates go on where it stopped, without its neighbours.
    """
    if candidates.model is not Memory:  # history rows (``valid_at``): they become whole memories
        return list(candidates[start : start + WINDOW])
    candidates, pool = (_window_columns(rows) for rows in (candidates, pool))
    if first is None:
        return list(candidates[start : start + WINDOW])
    ids = first.order[start : start + WINDOW]
    rows = {row.pk: row for row in pool.filter(pk__in=ids)} if ids else {}
    window = [rows[pk] for pk in ids if pk in rows]
    for row in window:
        row.rank = first.ranks.get(row.pk, 0.0)
    if len(ids) < WINDOW and first.lexical_rows == POOL:
        beyond = max(start, len(first.order)) - len(first.order) + POOL
        rest = candidates.exclude(pk__in=first.added) if first.added else candidates
        window += list(rest[beyond : beyond + WINDOW - len(ids)])
    return window


def _window_columns(rows: QuerySet) -> QuerySet:
    return rows.only(*WINDOW_COLUMNS).annotate(
        occurred_at=KeyTextTransform("occurred_at", "content"),
        statement_text=KeyTextTransform("statement", "content"),
    )


def _read_rest(memories: list[Memory]) -> None:
    """Read, in one query, the columns a window left out (content first) of these memories."""
    missing = [memory for memory in memories if "content" in memory.get_deferred_fields()]
    if not missing:
        return
    names = sorted(missing[0].get_deferred_fields() - {"search_vector"})
    rows = {
        row.pop("id"): row
        for row in Memory.objects.filter(pk__any=[m.pk for m in missing]).values("id", *names)
    }
    for memory in missing:
        memory.__dict__.update(rows[memory.pk])


def _episode_context(served: list, pool: QuerySet, policy, context: dict, around: int) -> tuple:
    """Place the hits in their episodes; return the placement, the neighbours shown, how many denied."""
    if not around or not served:
        return {}, {}, 0
    placed = episode_neighbours([memory for memory, _ in served], pool, around=around)
    wanted = {pk for sides in placed.values() for pks in sides.values() for pk in pks}
    nearby, denied = {}, 0
    for row in pool.filter(id__in=wanted) if wanted else []:
        memory = _as_memory(row)
        rule = policy.decide(memory, context)
        if rule.mode == "deny":
            denied += 1
        else:
            nearby[memory.id] = (memory, rule)
    return placed, nearby, denied


def _link_end_json(end: Any, shown) -> dict:
    """A linked memory as a neighbour (decided by the read policy), or an entity as {"entity": …}."""
    if isinstance(end, dict):
        return {"entity": end}
    return _neighbour_json(shown(*end), end[1])


def _neighbour_json(view: dict, rule) -> dict:
    return {
        "memory": view,
        "return_mode": rule.mode,
        "rule": rule.id,
        "consumable_text": view["consumable_text"],
    }


def read_memory(*, agent: Agent, memory_id: uuid.UUID, context: dict) -> tuple[dict, str, str]:
    """Return one memory in the view policy allows, with its mode and rule; audit the read.

    Denied, purged and unknown memories all raise ``MemoryNotFound`` (after
    the read is recorded with its true outcome).
    """
    policy = active_read_policy()
    memory = Memory.objects.with_fence().filter(tenant_id=agent.tenant_id, pk=memory_id).first()
    rule = policy.decide(memory, context) if memory else None
    if memory is None or rule is None or rule.mode == "deny":
        outcome = AccessEvent.Outcome.NOT_FOUND if memory is None else AccessEvent.Outcome.DENIED
        _record(
            agent,
            _Access(AccessEvent.Action.GET, outcome, fingerprint=policy.fingerprint, target=memory_id),
            context=context,
        )
        raise MemoryNotFound()
    evidence = current_evidence([memory]).get(memory.id) if rule.mode == "raw" else None
    _record(
        agent,
        _Access(
            AccessEvent.Action.GET, AccessEvent.Outcome.OK, fingerprint=policy.fingerprint, target=memory_id
        ),
        context=context,
        served=[(memory, rule)],
    )
    MemoryReads.count(agent.tenant_id, memory.id)
    view = present(memory, rule.mode, evidence=evidence)
    if rule.mode == "raw":  # a compaction summary names the source revisions it was derived from
        view["derived_from"] = lineage_of(memory=memory)
    return view, rule.mode, rule.id


def _candidates(agent: Agent, query: RecallQuery) -> QuerySet[Memory]:
    """Filter in SQL on indexed columns; lifecycle rules first (revoked and deleted never recalled)."""
    states = [s for s in (query.states or [Memory.State.ACTIVE]) if s in SEARCHABLE_STATES]
    if query.include_inactive and not query.states:
        states = list(SEARCHABLE_STATES)
    if query.valid_at:
        return _as_of(agent, query, states)
    memories = (
        Memory.objects.with_fence()
        .defer("search_vector")  # ranking reads it in SQL; shipping every window's vectors cost ~5 ms
        .filter(tenant_id=agent.tenant_id, state__in=states)
    )
    if not query.include_inactive:
        memories = memories.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
    return _narrowed(memories, query)


def _as_of(agent: Agent, query: RecallQuery, states: list[str]) -> QuerySet:
    """The revision of each memory that was valid at ``valid_at``, from history.

    Only memories that are still recallable today qualify (a memory revoked,
    deleted or purged since is never served, whatever it said back then); the
    fence is today's. The tenant's history rows are filtered first (on
    PostgreSQL the query's words select them through
    ``memory_history_search_vector_gin``); each row left is then checked on its own
    memory only: still recallable (one primary-key probe) and the newest
    revision valid at that moment (one probe of ``memory_history_valid_at_idx``).
    Neither check reads the tenant's other memories, so the cost follows the
    matches, not the tenant's size. The newest-revision check takes no other
    filter: the row served must be the memory as it was at that moment, and
    must itself match the query's filters (a reviewed move may have changed its
    subject, scope or type since).
    """
    recallable = Memory.objects.filter(pk=OuterRef("id"), tenant_id=agent.tenant_id, state__in=states)
    if not query.include_inactive:
        recallable = recallable.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
    history = _narrowed(_valid_at(Memory.history.filter(tenant_id=agent.tenant_id), query, states), query)
    newest = (
        _valid_at(Memory.history.filter(id=OuterRef("id")), query, states)
        .order_by("-revision", "-history_id")
        .values("history_id")[:1]
    )
    fenced = Memory.objects.with_fence().filter(pk=OuterRef("id"), fenced=True)
    return (
        history.filter(Exists(recallable), history_id=Subquery(newest))
        .defer("search_vector")  # ranked on in SQL, never shipped
        .annotate(fenced=Exists(fenced))
    )


def _valid_at(rows: QuerySet, query: RecallQuery, states: list[str]) -> QuerySet:
    """History rows of a creation or a change, in one of ``states``, whose window holds ``valid_at``."""
    return rows.filter(
        Q(valid_from__isnull=True) | Q(valid_from__lte=query.valid_at),
        Q(valid_to__isnull=True) | Q(valid_to__gt=query.valid_at),
        state__in=states,
        history_type__in=["+", "~"],
    )


def _narrowed(rows: QuerySet, query: RecallQuery) -> QuerySet:
    """Apply the subject, scope, type and dedupe_key filters (same columns on memories and their history)."""
    if query.subject:
        rows = rows.filter(subject_kind=query.subject["kind"], subject_id=query.subject["id"])
    if query.scope:
        rows = rows.filter(scope=query.scope)
    if query.types:
        rows = rows.filter(type__in=query.types)
    if query.dedupe_key:
        rows = rows.filter(dedupe_key=query.dedupe_key)
    if query.about_entity:  # only memories linked about the entity or anything merged into it
        about = MemoryLink.objects.filter(source_id=OuterRef("id"), target_entity_id__in=query.about)
        rows = rows.filter(Exists(about))
    return rows


def _resume(agent: Agent, query: RecallQuery, cursor: uuid.UUID | None) -> int:
    if cursor is None:
        return 0
    with on_primary():  # the previous page's event may be younger than the replica's lag
        previous = AccessEvent.objects.filter(
            pk=cursor, tenant_id=agent.tenant_id, agent=agent, action=AccessEvent.Action.SEARCH
        ).first()
    if previous is None or previous.next_offset is None:
        raise InvalidRecallCursor()
    if (previous.query, previous.filters) != (query.text, query.as_json()):
        raise InvalidRecallCursor("A cursor continues the same query with the same filters")
    return previous.next_offset


_HISTORY_COLUMNS = tuple(f.attname for f in Memory._meta.concrete_fields if f.name != "search_vector")


def _as_memory(row) -> Memory:
    """A history row (``valid_at`` recall) becomes the memory as it was; a memory stays itself."""
    if isinstance(row, Memory):
        return row
    # Not ``row.instance``: it reads the columns history leaves out (search_vector), one query a row.
    memory = Memory(**{name: getattr(row, name) for name in _HISTORY_COLUMNS})
    memory.fenced, memory.rank = row.fenced, getattr(row, "rank", 0.0)  # type: ignore[attr-defined]
    return memory


@dataclass(frozen=True)
class _Access:
    """What one read's access event says: a search's query and page, or a get's target."""

    action: str
    outcome: str
    fingerprint: str
    query: RecallQuery | None = None
    target: uuid.UUID | None = None
    omitted: int = 0
    next_offset: int | None = None
    ranking_version: str = ""
    registration_version: int | None = None  # None: the tenant's active registration now


@transaction.atomic
def _record(agent: Agent, access: _Access, *, context: dict, served: list | None = None) -> AccessEvent:
    """Write the access event and one item per memory served (in its mode, by its rule)."""
    query = access.query
    event = AccessEvent.objects.create(
        tenant_id=agent.tenant_id,
        agent=agent,
        action=access.action,
        outcome=access.outcome,
        target_memory_id=access.target,
        query=query.text if query else "",
        filters=query.as_json() if query else {},
        policy_context=_audited_context(context),
        correlation_id=str(context.get("correlation_id", ""))[:200],
        omitted_count=access.omitted,
        next_offset=access.next_offset,
        policy_fingerprint=access.fingerprint,
        ranking_version=access.ranking_version,
        registration_version=access.registration_version
        if access.registration_version is not None
        else active_registration(tenant_id=agent.tenant_id).version,
    )
    AccessEventItem.objects.bulk_create(
        AccessEventItem(
            event=event,
            tenant_id=agent.tenant_id,
            memory_id=memory.id,
            revision=memory.revision,
            mode=rule.mode,
            rule=rule.id,
        )
        for memory, rule in served or []
    )
    return event


def subject_pseudonym(subject: dict) -> dict:
    """Return a subject as access events keep it: the kind, and the id only as a keyed digest.

    Access events are append-only, so a purge could not take a subject id out
    of them later; stored this way it never goes in.
    """
    return {"kind": subject.get("kind"), "id_hmac": keyed_digest("memory_core.subject", subject.get("id"))}


def dedupe_pseudonym(dedupe_key: str) -> str:
    """Return a dedupe_key as access events keep it: a keyed digest (a key may name its subject)."""
    return keyed_digest("memory_core.dedupe_key", dedupe_key)


def _audited_context(context: dict) -> dict:
    subject = context.get("acting_for_subject")
    return {**context, "acting_for_subject": subject_pseudonym(subject)} if subject else context


def recall_item_json(item: RecallItem) -> dict[str, Any]:
    return {
        "memory": item.memory,
        "return_mode": item.return_mode,
        "rule": item.rule,
        "score": item.score,
        "matched_terms": item.matched_terms,
        "explanation": item.explanation,
        "consumable_text": item.memory["consumable_text"],
        **({"context": item.context} if item.context is not None else {}),
        **({"links": item.links} if item.links is not None else {}),
    }
