"""Hybrid ranking: lexical, dense, recency, validity, corroboration, access activation and owner feedback.

Recall selects candidates lexically (``memory_core.search``) and reranks each
window of ``WINDOW`` of them by a weighted sum of bounded signals. The
weights are fixed and versioned (``WEIGHTS``), chosen per tenant, never per
request; every item carries its explanation and every access event the
version it was ranked with.

A signal counts only when the view served shows what it is computed from:
text-based (lexical) only for ``raw`` items (a ``summary`` item is matched
against its summary; dense similarity, from the whole text's vector, counts
only for ``raw``), evidence-based (corroboration) only where evidence is
shown (``raw``). Metadata every view shows (times, validity) and usage
records (reads, feedback) count for all. So a masked statement or its
evidence never moves an item up or down. Each value is clamped to [0, 1]
(feedback to [-1, 1]) and each weight is small next to the lexical one: a
click or a vote reorders what matched, never makes a stale or unmatched
fact come first.
"""

import bisect
import functools
import math
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from evidence.models import EvidenceRevision
from memory_core import activation, named_people
from memory_core.embeddings import active_embedder, query_vector, similarities
from memory_core.first_stage import ANSWERS, BESIDE, FOLLOWS, FOLLOWS_ANSWER, FirstStage, Spread
from memory_core.models import (
    Memory,
    MemoryReads,
    MemoryVector,
    RecallFeedback,
)
from memory_core.read_policy import ReadRule
from memory_core.return_modes import visible_text
from memory_core.search import query_groups, visible_match
from memory_core.selectors import current_evidence
from registrations.compiled import ActiveRegistration
from registrations.selectors import active_registration

# Candidates reranked together. 50 served the quality set exactly as 100 did (recall@10 0.73,
# every category the same; bench/HISTORY.md) at half the rows shipped, decided and scored.
WINDOW = 50
ACTIVATION_DAYS = 30  # the use history activation reads (a read 30 days old weighs 30^-0.5 ≈ 0.18)
CORROBORATION_SATURATION = 3  # independent valid sources that give the full corroboration
# Words that ask for the present state of a fact ("which city is she living in now?"). Not "new":
# in "what is her new job" it is a word to match, and lexical ranking already finds that turn.
PRESENT = frozenset(["now", "currently", "current", "nowadays", "latest", "still", "today", "these"])
_WORD = re.compile(r"[a-z]+")
# The signals the first stage computes (``FirstStage`` fields), each weighted by the field of the
# same name of ``RankingWeights``.
STAGE_SIGNALS = ("coverage", "subject", "when", "happening", "narrating", "person")


@dataclass(frozen=True)
class RankingWeights:
    """One versioned set of weights; a version's numbers never change (add a version instead)."""

    version: str
    lexical: float
    recency: float
    recency_present: float  # replaces ``recency`` when the query asks for the present
    validity: float
    corroboration: float
    activation: float
    feedback: float
    # Cosine with the query, when an embedder is configured (0 before 2026-12-15.1, 0.25 before
    # 2026-12-29.1, 0.5 before 2027-02-02.1).
    dense: float = 0.0
    episode: float = 0.0  # the lexical value of an adjacent hit in the episode (0 before 2026-12-22.1)
    answer: float = 0.0  # instead of ``episode`` for the reply to a hit that asks (0 before 2026-12-29.1)
    coverage: float = 0.0  # the share of the query its episode's raw turns hold (0 before 2027-01-05.1)
    subject: float = 0.0  # the share of the query the memory's subject id names (0 before 2027-01-12.1)
    follow_up: float = 0.0  # for the reply to a question asked right after a hit (0 before 2027-01-19.1)
    # For the reply to a question asked after the answer to a hit that asks (0 before 2027-01-26.1).
    answer_follow_up: float = 0.0
    when: float = 0.0  # for a question that asks when, a candidate that says when
    # For a question about someone's doings (a list, a disposition), a candidate that says when: the
    # turn that told a happening (0 before 2027-02-23.1).
    happening: float = 0.0
    # A turn that asks takes neither ``when`` nor ``happening``, whatever words of time it holds
    # (False before 2027-03-02.1).
    asking_tells_nothing: bool = False
    # For a question about someone's doings, a candidate that narrates: a verb in the past tense
    # (0 before 2027-03-09.1).
    narrating: float = 0.0
    # The memories of the subjects a question names are candidates though they match no word of it
    # (False before 2027-03-16.1: only when no word matched anything).
    named_subjects_join: bool = False
    # A candidate whose episode holds every name the question writes (0 before 2027-03-23.1).
    person: float = 0.0
    # ``dense`` for the named embedders instead (none before 2027-02-16.1 and since 2027-04-06.1): a
    # static word model's meaning was believed less than a sentence transformer's while the names in
    # a question pulled it.
    dense_by_embedder: tuple[tuple[str, float], ...] = ()
    # ``dense`` compares the question without the names it writes, which ``person``, ``subject`` and
    # the words weigh (False before 2027-03-30.1: a speaker's name in each of her turns made every one
    # of them near a question that names her, whatever it asked).
    dense_without_names: bool = False

    def dense_for(self, embedder: str) -> float:
        """The dense weight for vectors from ``embedder``."""
        return dict(self.dense_by_embedder).get(embedder, self.dense)

    def dense_text(self, query: str) -> str:
        """What of the question its vector is made from."""
        return named_people.without_names(query) if self.dense_without_names else query


_FIRST = RankingWeights(
    version="2026-12-01.1",
    lexical=1.0,
    recency=0.1,
    recency_present=0.5,
    validity=0.5,
    corroboration=0.1,
    activation=0.05,
    feedback=0.2,
)
# Each later version is the one before with what it changed, so a diff of versions reads as one line.
_DENSE = replace(_FIRST, version="2026-12-15.1", dense=0.25)
_EPISODE = replace(_DENSE, version="2026-12-22.1", episode=0.5, recency=0.0)
_ANSWER = replace(_EPISODE, version="2026-12-29.1", answer=0.75, dense=0.5)
_COVERAGE = replace(_ANSWER, version="2027-01-05.1", coverage=0.5)
_SUBJECT = replace(_COVERAGE, version="2027-01-12.1", subject=1.0)
_FOLLOW_UP = replace(_SUBJECT, version="2027-01-19.1", follow_up=0.5)
_ANSWER_FOLLOW_UP = replace(_FOLLOW_UP, version="2027-01-26.1", answer_follow_up=0.5)
# Meaning weighs as much as the best word match (only with an embedder: nothing changes without one).
_MEANING = replace(_ANSWER_FOLLOW_UP, version="2027-02-02.1", dense=1.0)
# A question that asks when is answered by the turn that says when.
_WHEN = replace(_MEANING, version="2027-02-09.1", when=0.35)
# WordLlama, the default embedder, at half the lexical weight (MiniLM and the rest keep 1.0).
_STATIC_MEANING = replace(
    _WHEN, version="2027-02-16.1", dense_by_embedder=(("wordllama-l2-supercat-256", 0.5),)
)
# A question about someone's doings is answered by the turns that told them.
_HAPPENINGS = replace(_STATIC_MEANING, version="2027-02-23.1", happening=0.5)
# "Any plans for the weekend?" tells no happening.
_ASKING = replace(_HAPPENINGS, version="2027-03-02.1", asking_tells_nothing=True)
# A turn that tells a happening narrates it, whether or not it says when.
_NARRATING = replace(_ASKING, version="2027-03-09.1", narrating=0.3)
# A question about someone considers all of their memories, whether their text names them or not.
_NAMED_SUBJECTS_JOIN = replace(_NARRATING, version="2027-03-16.1", named_subjects_join=True)
# An answer about the person a question names is said where that person is.
_PERSON = replace(_NAMED_SUBJECTS_JOIN, version="2027-03-23.1", person=1.0)
# Meaning is what a question asks about; who it asks about, the person signals weigh.
_TOPIC = replace(_PERSON, version="2027-03-30.1", dense_without_names=True)
# What a question asks, without who, is believed as much as the best word match, WordLlama's too.
_TOPIC_MEANING = replace(_TOPIC, version="2027-04-06.1", dense_by_embedder=())
WEIGHTS = {
    weights.version: weights
    for weights in (
        _FIRST,
        _DENSE,
        _EPISODE,
        _ANSWER,
        _COVERAGE,
        _SUBJECT,
        _FOLLOW_UP,
        _ANSWER_FOLLOW_UP,
        _MEANING,
        _WHEN,
        _STATIC_MEANING,
        _HAPPENINGS,
        _ASKING,
        _NARRATING,
        _NAMED_SUBJECTS_JOIN,
        _PERSON,
        _TOPIC,
        _TOPIC_MEANING,
    )
}
DEFAULT_VERSION = "2027-04-06.1"


@dataclass(frozen=True)
class WeightsChoice:
    """The weights one search ranks with: per memory type, the version the tenant's registration
    names for it (``ranking_weights``), else the tenant's default."""

    default: RankingWeights
    by_type: dict[str, RankingWeights] = field(default_factory=dict)

    def of(self, memory_type: str) -> RankingWeights:
        return self.by_type.get(memory_type, self.default)

    def version(self, memory_types: Iterable[str]) -> str:
        """The versions these types ranked with, sorted and joined by "+" (the default's if none)."""
        return "+".join(sorted({self.of(t).version for t in memory_types})) or self.default.version


def weights_for(agent, registration: ActiveRegistration | None = None) -> WeightsChoice:
    """Return the weights the agent's tenant ranks with.

    The default is the tenant's pinned version (``CUSTODIAN_RANKING_WEIGHTS``
    pins tenants by name to a version of ``WEIGHTS``; an unknown version is a
    configuration error, raised here), else the deployment's. A type whose
    registration names a version ranks with that one (publishing checks the
    version exists).
    """
    pinned = getattr(settings, "CUSTODIAN_RANKING_WEIGHTS", None)
    default = WEIGHTS[pinned.get(agent.tenant.name, DEFAULT_VERSION) if pinned else DEFAULT_VERSION]
    registration = registration or active_registration(tenant_id=agent.tenant_id)
    return WeightsChoice(
        default,
        {
            memory_type: WEIGHTS[entry["ranking_weights"]]
            for memory_type, entry in registration.document["types"].items()
            if entry.get("ranking_weights")
        },
    )


@dataclass
class Scored:
    """One ranked candidate: its score, and the signals (value, weight) that made it.

    The explanation is built only for the items a page serves (``explanation``),
    not for every candidate of the window.
    """

    memory: Memory
    rule: ReadRule
    score: float
    signals: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)  # per signal: what else the explanation says
    evidence: list[dict] | None = None  # a raw item's evidence as served (``selectors.current_evidence``)

    @functools.cached_property
    def explanation(self) -> dict:
        explained = {
            name: {"value": round(value, 4), "weight": weight, "contribution": round(value * weight, 4)}
            for name, (value, weight) in self.signals.items()
        }
        for name, notes in self.notes.items():
            explained[name].update(notes)
        return explained


@dataclass(frozen=True)
class SearchRanking:
    """What one search ranks every window with.

    ``stage`` carries what the first stage found that a window cannot: each
    neighbour's episode signal (``memory_core.first_stage``).
    """

    query: str
    weights: WeightsChoice
    tenant_id: object
    registration: ActiveRegistration
    at: datetime | None = None
    stage: FirstStage | None = None


def rerank(window: list[Memory], rules: list[ReadRule], search: SearchRanking) -> list[Scored]:
    """Score one window of candidates (policy already decided); return it best first.

    Three queries whatever the window holds: reads, evidence links, feedback.
    Denied items are scored as nothing and put first in the window, where recall
    skips and counts them before it fills a slot.
    """
    query, weights, tenant_id, registration = (
        search.query,
        search.weights,
        search.tenant_id,
        search.registration,
    )
    at = search.at or timezone.now()
    shown = [(m, r) for m, r in zip(window, rules, strict=True) if r.mode != "deny"]
    uses = _uses([m.id for m, _ in shown], tenant_id)
    evidence = current_evidence([m for m, r in shown if r.mode == "raw"])
    sources = _sources(evidence)
    votes = _votes([(m.id, m.revision) for m, _ in shown], tenant_id)
    lexical = _lexical(shown, query)
    dense, embedder = _dense([m for m, r in shown if r.mode == "raw"], query, weights, search.stage)
    recency = _recency(shown)
    present = bool(PRESENT & set(_WORD.findall(query.lower())))
    now, levels = timezone.now(), {}  # activation is about use up to now, whatever ``at`` asks
    spread = search.stage.spread if search.stage else {}
    scored = []
    for memory, rule in zip(window, rules, strict=True):
        if rule.mode == "deny":
            scored.append(Scored(memory, rule, 0.0))
            continue
        up, down = votes.get((memory.id, memory.revision), (0, 0))
        type_weights = weights.of(memory.type)
        levels[memory.id] = _level(registration, memory, uses.get(memory.id, ()), now)
        signals = {
            "lexical": (lexical.get(memory.id, 0.0), type_weights.lexical),
            "recency": (
                recency.get(memory.id, 0.0),
                type_weights.recency_present if present else type_weights.recency,
            ),
            "validity": (_validity(memory, at), type_weights.validity),
            "corroboration": (
                min(sources.get(memory.id, 0), CORROBORATION_SATURATION) / CORROBORATION_SATURATION,
                type_weights.corroboration,
            ),
            "activation": (activation.signal(levels[memory.id]), type_weights.activation),
            "feedback": ((up - down) / (up + down + 1), type_weights.feedback),
        }
        signals["dense"] = (dense.get(memory.id, 0.0), type_weights.dense_for(embedder))
        beside = spread.get(memory.id)
        role = _role(beside, type_weights)
        signals["episode"] = (beside.value if beside else 0.0, _ROLE_WEIGHT[role](type_weights))
        for name in STAGE_SIGNALS:  # what the first stage found, under the weight of the same name
            found = getattr(search.stage, name) if search.stage else {}
            signals[name] = (found.get(memory.id, 0.0), getattr(type_weights, name))
        level = levels[memory.id]
        notes = {
            "episode": ({"beside": str(beside.source)} | ({role: True} if role != BESIDE else {}))
            if beside
            else {},
            "activation": {"base_level": None if level == -math.inf else round(level, 4)},
            "dense": {"embedder": embedder}
            if memory.id in dense
            else {"embedder": embedder, "absent": _absent(embedder, rule, query)},
        }
        score = round(sum(value * weight for value, weight in signals.values()), 6)
        scored.append(Scored(memory, rule, score, signals, notes, evidence.get(memory.id)))
    order = sorted(
        range(len(scored)),
        key=lambda n: (
            scored[n].rule.mode != "deny",  # denied first: skipped (and counted) before any slot
            -scored[n].score,
            -scored[n].memory.confidence,
            -scored[n].memory.updated_at.timestamp(),
            str(scored[n].memory.id),
        ),
    )
    return [scored[n] for n in order]


# The weight of a neighbour's episode signal, by its role (``first_stage.Spread``).
_ROLE_WEIGHT = {
    BESIDE: lambda weights: weights.episode,
    ANSWERS: lambda weights: weights.answer,
    FOLLOWS: lambda weights: weights.follow_up,
    FOLLOWS_ANSWER: lambda weights: weights.answer_follow_up,
}


def _role(beside: Spread | None, weights: RankingWeights) -> str:
    """A neighbour's role; the reply to a hit that asks is any neighbour to weights without ``answer``."""
    role = beside.role if beside else BESIDE
    return BESIDE if role == ANSWERS and not weights.answer else role


def _lexical(shown: list[tuple[Memory, ReadRule]], query: str) -> dict:
    """BM25 relative to the best ``raw`` item of the window; other views match on the text they show."""
    groups = query_groups(query) if query else []
    if not groups:
        return {}
    raw = {m.id: float(getattr(m, "rank", 0.0) or 0.0) for m, r in shown if r.mode == "raw"}
    best = max(raw.values(), default=0.0)
    values = {pk: (rank / best if best > 0 else 0.0) for pk, rank in raw.items()}
    for memory, rule in shown:
        if rule.mode != "raw":
            values[memory.id] = visible_match(visible_text(memory, rule.mode), groups)
    return values


def _dense(
    raw: list[Memory], query: str, weights: WeightsChoice, stage: FirstStage | None = None
) -> tuple[dict, str]:
    """Cosine of each ``raw`` item's revision vector with the query's, 0 to 1 (at most one query);
    the embedder.

    An item has a value only if its exact revision was embedded by the
    active embedder; one applied before the embedder was configured has none
    (``embed_memories`` fills them in). The query's vector is of what its
    type's weights compare (``RankingWeights.dense_text``). What the first
    stage compared for the same revision and text is taken as it found it;
    only the rest (its neighbours, mostly) are read.
    """
    embedder = active_embedder()
    if not embedder.dimensions or not raw or not query.strip():
        return {}, embedder.name
    compared = {memory.id: weights.of(memory.type).dense_text(query) for memory in raw}
    values: dict = {}
    if stage is not None:
        known = {m.id for m in raw if stage.dense_known(m.id, m.revision, compared[m.id])}
        values = {pk: stage.dense[pk] for pk in known if pk in stage.dense}
        raw = [memory for memory in raw if memory.id not in known]
    if not raw:
        return values, embedder.name
    revisions = {memory.id: memory.revision for memory in raw}
    rows = MemoryVector.objects.filter(memory_id__in=revisions, embedder=embedder.name).values_list(
        "memory_id", "memory_revision", "vector"
    )
    found = [(memory_id, vector) for memory_id, revision, vector in rows if revisions[memory_id] == revision]
    for text in {compared[memory.id] for memory in raw}:  # one, or two where types rank with other versions
        these = [(memory_id, vector) for memory_id, vector in found if compared[memory_id] == text]
        cosines = similarities(query_vector(embedder.name, text), [vector for _, vector in these])
        values |= zip([memory_id for memory_id, _ in these], cosines, strict=True)
    return values, embedder.name


def _absent(embedder: str, rule: ReadRule, query: str) -> str:
    """Why an item has no dense signal, for its explanation."""
    if embedder == "none":
        return "no embedder configured"
    if not query.strip():
        return "no query text"
    if rule.mode != "raw":
        return f"text not shown ({rule.mode})"
    return "no vector for this revision"


def _time(memory: Memory, rule: ReadRule) -> float:
    """When the revision holds from: valid_from, else, for an event the viewer may read, when it
    happened, else its creation.

    An event's ``occurred_at`` is when the fact was told, which the order of applying does not
    keep (one batch applies a whole conversation at one instant); it is content, so it counts
    only where the view is raw.
    """
    if memory.valid_from:
        return memory.valid_from.timestamp()
    occurred = occurred_at_of(memory) if rule.mode == "raw" else None
    if isinstance(occurred, str):
        parsed = parse_datetime(occurred)
        if parsed is not None and parsed.tzinfo is not None:
            return parsed.timestamp()
    return memory.created_at.timestamp()


def occurred_at_of(memory: Memory):
    """The content's ``occurred_at``: a recall window reads it as a column instead of the content."""
    if "content" in memory.get_deferred_fields():
        return getattr(memory, "occurred_at", None)
    return memory.content.get("occurred_at") if isinstance(memory.content, dict) else None


def _recency(shown: list[tuple[Memory, ReadRule]]) -> dict:
    """Share of the window's other live memories about the same subject that are older, 0 to 1.

    Relative to its own subject, because "what is current" compares the facts
    about one subject; between subjects the order of writing says nothing.
    Only active, unfenced memories are compared against, so an expired or
    fenced one never moves another.
    """
    times = {memory.id: _time(memory, rule) for memory, rule in shown}
    live = {m.id for m, _ in shown if m.state == Memory.State.ACTIVE and not m.is_fenced}
    by_subject: dict = {}
    for memory, _ in shown:
        if memory.id in live:
            by_subject.setdefault((memory.subject_kind, memory.subject_id), []).append(times[memory.id])
    for subject_times in by_subject.values():
        subject_times.sort()
    recency = {}
    for memory, _ in shown:
        subject_times = by_subject.get((memory.subject_kind, memory.subject_id), [])
        others = len(subject_times) - (memory.id in live)
        older = bisect.bisect_left(subject_times, times[memory.id])  # its own time is not older
        recency[memory.id] = older / others if others else 1.0
    return recency


def _validity(memory: Memory, at: datetime) -> float:
    """1 while the revision's validity window holds ``at``; 0 once it ended or before it began."""
    if memory.valid_to and memory.valid_to <= at:
        return 0.0
    if memory.valid_from and memory.valid_from > at:
        return 0.0
    return 1.0


def _level(registration: ActiveRegistration, memory: Memory, uses, now: datetime) -> float:
    """Base-level activation with the decay and importance the tenant registered for the type.

    Importance is a constant added to ``B`` (ACT-R's base-level offset), so it
    lifts a used memory and never makes an unused one look used.
    """
    parameters = registration.entry(memory.type)["activation"]
    level = activation.base_level(uses, at=now, decay=parameters["decay"])
    return level + parameters["importance"] if level != -math.inf else level


def _uses(ids: Iterable, tenant_id) -> dict:
    """Each memory's explicit reads (gets) per day in the last ``ACTIVATION_DAYS`` (one query).

    Search hits do not count: a memory served because it ranked high would
    otherwise rank higher for having been served. The daily counts
    (``MemoryReads``) cost at most ``ACTIVATION_DAYS`` index rows per memory,
    however long the history.
    """
    ids = list(ids)
    if not ids:
        return {}
    since = (timezone.now() - timedelta(days=ACTIVATION_DAYS)).date()
    uses: dict = {}
    rows = MemoryReads.objects.filter(tenant_id=tenant_id, memory_id__any=ids, day__gte=since)
    for memory_id, day, reads in rows.values_list("memory_id", "day", "reads"):
        uses.setdefault(memory_id, []).append((day, reads))
    return uses


def _sources(evidence: dict[uuid.UUID, list[dict]]) -> dict:
    """Independent sources (distinct evidence sources, revision valid now) of each served revision."""
    valid = EvidenceRevision.Status.VALID
    return {
        memory_id: len({cited["evidence_id"] for cited in links if cited["status"] == valid})
        for memory_id, links in evidence.items()
    }


def _votes(items: list[tuple], tenant_id) -> dict:
    """Useful and not-useful votes on each exact (memory, revision), in one query."""
    if not items:
        return {}
    revisions = dict(items)
    rows = (
        RecallFeedback.objects.filter(tenant_id=tenant_id, memory_id__any=list(revisions))
        .values("memory_id", "revision")
        .annotate(
            up=Count("id", filter=Q(verdict=RecallFeedback.Verdict.USEFUL)),
            down=Count("id", filter=Q(verdict=RecallFeedback.Verdict.NOT_USEFUL)),
        )
    )
    return {
        (row["memory_id"], row["revision"]): (row["up"], row["down"])
        for row in rows
        if revisions.get(row["memory_id"]) == row["revision"]
    }
