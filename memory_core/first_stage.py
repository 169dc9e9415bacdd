"""The first stage: the order in which recall's windows are reranked, before any window is.

Windows are reranked one at a time, so what decides which memories ever reach
a window decides what can be served. The first ``POOL`` lexical candidates are
reordered here by these signals besides their BM25 (relative to the best):

- **dense**: with an embedder, the cosine of the query's vector (of what it
  asks, without the names it writes: ``RankingWeights.dense_text``) with the
  candidate's revision vector, so a memory that words rank 150th (it shares
  only a name with the question) can still reach the first window;
- **episode**: the turns (``episodic_event`` memories of a ``conversation`` source) just before and after
  each of the best ``SPREAD_HITS`` turns that match, in their episode
  (``memory_core.episodes``), take that hit's lexical value, so an answer
  that says "Finally, yes! On Tuesday night" comes up
  with the question it answers, though it shares no word with the search.
  The turn right after a hit that asks something (its last sentence ends
  in "?") is that question's likely answer, and takes the ``answer`` weight
  instead: in a conversation, what a question's words are about is said in
  the reply. When the turn right after a hit asks instead ("Ooh, was it
  worth it?"), the turn after that (the teller's reply about the hit) takes
  the ``follow_up`` weight, provided the turn between is served ``raw``; and
  when a hit asks, is answered and the listener asks again ("what was it
  like?"), the turn after that (the story) takes ``answer_follow_up``;
- **coverage**: each turn takes the share of the question its episode's turns
  hold between them (``memory_core.coverage``), so the session where the
  question's person and subject both come up lifts its turns above a lone
  word match in someone else's chat;
- **subject**: each candidate takes the share of the question its subject id
  names (``memory_core.subjects``), so the turns of the person asked about
  come first though they do not say their own name; when no word matches,
  that person's memories stand in as the candidates, and when some do, they
  join them, matched or not (``named_subjects_join``): what a "Caroline:" in
  each of her turns would have done;
- **when**: for a question that asks when, each candidate, or turn after a
  hit, that holds a word of time and does not ask takes 1
  (``memory_core.when``): the turn that told a happening says when it was,
  a later mention mostly does not;
- **happening**: the same, for a question about someone's doings across the
  conversation ("What hobbies has …", "Would she enjoy …"): the turns that
  tell them say when, the small talk that shares its words does not;
- **narrating**: for such a question, each candidate, or turn after a hit,
  that narrates (a verb in the past tense, in a statement that does not ask)
  takes 1: a telling turn need not say when; and
- **person**: each candidate, or turn next to a hit, takes the share of the
  names the question writes that its episode holds (``memory_core.named_people``):
  an answer about Caroline is said where she is, not in someone else's chat
  that shares a rarer word with the question.

Only a hit the read policy serves ``raw`` gives a neighbour anything, and only
a candidate served ``raw`` gets a dense, coverage or subject value (or holds words for
its episode), so hidden text never moves an item; the signals go on to the
windows (``ranking.rerank``), where each item's explanation shows them.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db import connection
from django.db.models import F, FloatField, OuterRef, QuerySet, Subquery, Value
from django.db.models.fields.json import KeyTextTransform

from core.binary_rows import binary_rows
from evidence.models import EvidenceSource
from memory_core import coverage as episode_coverage
from memory_core import named_people, subjects
from memory_core import when as asking_when
from memory_core.embeddings import active_embedder, query_vector, similarities
from memory_core.episodes import Following, Placed, adjacent
from memory_core.models import Memory, MemoryVector
from memory_core.read_policy import ReadPolicy

if TYPE_CHECKING:
    from memory_core.ranking import RankingWeights

POOL = 1000  # lexical candidates the first stage reorders
# Best raw turns whose neighbours take their lexical value (about two pages). Only events of a
# conversation: memories citing one document share an "episode" too, but the order they were
# proposed in means nothing.
SPREAD_HITS = 20
# What the read policy decides on (ReadPolicy.decide), fetched with each candidate.
_POLICY_COLUMNS = ("sensitivity", "scope", "type", "state", "subject_kind", "subject_id", "fenced")


BESIDE, ANSWERS, FOLLOWS, FOLLOWS_ANSWER = "beside", "answers", "follows", "follows_answer"
# Columns a read may annotate.
DENSE_VECTOR, HELD, SAYS_WHEN, STATEMENT, SUMMARY = "dense_vector", "held", "says_when", "said", "summarised"


@dataclass(frozen=True)
class Spread:
    """A neighbour's episode signal: the lexical value of the hit it comes from, and its role.

    ``role``: ``answers`` for the turn right after a hit that asks (it weighs
    ``answer``), ``follows`` for the reply to a question asked right after a hit
    (it weighs ``follow_up``), ``follows_answer`` for the reply to a question asked
    after the answer to a hit that asks (``answer_follow_up``), ``beside`` for any
    other turn next to a hit.
    """

    value: float
    source: uuid.UUID
    role: str = BESIDE


@dataclass
class FirstStage:
    """The candidates in first-stage order, each one's BM25 rank, and what the signals gave."""

    order: list[uuid.UUID]
    ranks: dict[uuid.UUID, float]
    lexical_rows: int  # how many of ``order`` came from the lexical candidates (the rest: neighbours)
    spread: dict[uuid.UUID, Spread] = field(default_factory=dict)
    dense: dict[uuid.UUID, float] = field(default_factory=dict)
    coverage: dict[uuid.UUID, float] = field(default_factory=dict)
    subject: dict[uuid.UUID, float] = field(default_factory=dict)
    when: dict[uuid.UUID, float] = field(default_factory=dict)
    happening: dict[uuid.UUID, float] = field(default_factory=dict)
    narrating: dict[uuid.UUID, float] = field(default_factory=dict)
    person: dict[uuid.UUID, float] = field(default_factory=dict)
    # What ``dense`` compared: the query text, and the revision of each candidate whose vector it
    # looked for (found or not), so the windows need not read those vectors again.
    dense_text: str = ""
    dense_revisions: dict[uuid.UUID, int] = field(default_factory=dict)

    def dense_known(self, memory_id: uuid.UUID, revision: int, text: str) -> bool:
        """Did ``dense`` compare ``text`` with this exact revision's vector (or find it has none)?"""
        return text == self.dense_text and self.dense_revisions.get(memory_id) == revision

    @property
    def added(self) -> list[uuid.UUID]:
        """Neighbours that are not among the first ``POOL`` lexical candidates."""
        return [pk for pk in self.order if pk not in self.ranks]


def first_stage(
    candidates: QuerySet,
    pool: QuerySet,
    query: str,
    *,
    policy: ReadPolicy,
    context: dict,
    weights: "RankingWeights",
    tenant_id=None,
) -> FirstStage | None:
    """Reorder the first ``POOL`` lexical candidates; None when there is nothing to reorder by.

    One query (ids, BM25, what the policy decides on, the word groups each
    holds and, with an embedder, each candidate's vector for its exact
    revision; its statement and summary where a signal reads the text: a
    question about someone's doings, and on SQLite any that counts words
    over the candidates), in PostgreSQL's binary format, plus one placing
    the best hits in their episodes (with what each and the turns after it
    say, to tell which ask, and what the policy decides those turns on), and
    one for the words' IDF; with the subject signal, one for the tenant's
    subject ids and, when the question names any, one for their memories
    (which join the candidates, or stand in when no word matched).
    """
    episode_weight = weights.episode
    embedder = active_embedder()
    dense_weight = weights.dense_for(embedder.name)
    with_dense = bool(embedder.dimensions and dense_weight)
    reordering = (
        with_dense
        or episode_weight
        or weights.coverage
        or weights.subject
        or weights.when
        or weights.happening
        or weights.narrating
        or weights.person
    )
    if not query.strip() or not reordering:
        return None
    columns = ["pk", "revision", "rank", *_POLICY_COLUMNS, "episode"]
    wants_groups = weights.coverage or weights.subject or weights.person
    groups = episode_coverage.word_groups(query, tenant_id, using=candidates.db) if wants_groups else None
    groups = groups if groups and groups.stems else None
    in_sql = bool(groups and connection.vendor == "postgresql")
    telling = _telling(query, weights)
    narrating = telling == "happening" and bool(weights.narrating)  # read from the text instead
    annotations = _annotations(
        embedder.name if with_dense else None,
        groups if in_sql else None,
        when=bool(telling) and not narrating and connection.vendor == "postgresql",
        unless_asking=weights.asking_tells_nothing,
        text=narrating or _counted_in_text(telling, groups, weights),
    )
    columns += list(annotations)

    def read(rows: QuerySet) -> list[tuple]:
        for annotate in annotations.values():
            rows = annotate(rows)
        return binary_rows(rows.values_list(*columns)[:POOL])

    rows, joining, standing_in = _with_named(read(candidates), read, pool, groups, weights, tenant_id)
    held = columns.index(HELD) if in_sql else None
    texts = _texts(rows + joining, columns)
    decided: dict[tuple, bool] = {}  # a handful of distinct (sensitivity, scope, …, subject) per search
    raw = [row for row in rows + joining if _decided_raw(policy, tuple(row[3:10]), context, decided)]
    named = _named(raw, groups) if groups and weights.subject else {}
    if standing_in:
        rows = raw = [row for row in raw if named.get(row[0])]
    ranks = {row[0]: float(row[2] or 0.0) for row in rows}
    best = max(ranks.values(), default=0.0)
    lexical = {pk: (rank / best if best > 0 else 0.0) for pk, rank in ranks.items()}
    lexical |= {row[0]: 0.0 for row in raw if row[0] not in ranks}  # joining: in order, no BM25 rank
    stage = FirstStage(order=[], ranks=ranks, lexical_rows=len(rows))
    events = [row for row in raw if row[5] == Memory.Type.EPISODIC_EVENT]
    if with_dense:
        vectors = columns.index(DENSE_VECTOR)
        with_vector = [row for row in raw if row[vectors] is not None]
        stage.dense_text = weights.dense_text(query)
        stage.dense_revisions = {row[0]: row[1] for row in raw}
        meaning = query_vector(embedder.name, stage.dense_text)
        stage.dense = dict(
            zip(
                [row[0] for row in with_vector],
                similarities(meaning, [row[vectors] for row in with_vector]),
                strict=True,
            )
        )
    share = {
        BESIDE: episode_weight,
        ANSWERS: weights.answer or episode_weight,
        FOLLOWS: weights.follow_up,
        FOLLOWS_ANSWER: weights.answer_follow_up,
    }
    following: dict[uuid.UUID, Following] = {}  # the turns after the hits, as ``_spread`` read them

    def served_raw(columns: tuple) -> bool:
        return _decided_raw(policy, columns, context, decided)

    if episode_weight:
        turns = pool.filter(type=Memory.Type.EPISODIC_EVENT)
        stage.spread, following = _spread(events[:SPREAD_HITS], lexical, turns, share, served_raw)
    if groups:
        stage.subject = {pk: groups.share(bits) for pk, bits in named.items() if bits}
        if weights.coverage:
            stage.coverage = _coverage([row for row in events if row[10]], groups, held, named, texts)
        if weights.person:
            stage.person = _person(query, raw, groups, held, named, stage.spread, texts)
    if telling:
        told = _telling_candidates(raw, columns, texts, weights.asking_tells_nothing)
        _told(stage, telling, told, following, served_raw, weights)
    stage.order = _ordered(lexical, stage, weights, share, dense_weight)
    return stage


def _with_named(
    rows: list[tuple], read: Callable[[QuerySet], list[tuple]], pool: QuerySet, groups, weights, tenant_id
) -> tuple[list[tuple], list[tuple], bool]:
    """The lexical candidates, the memories of the subjects the question names that join them
    (``named_subjects_join``), and whether those stand in for the candidates (no word matched)."""
    if not (groups and weights.subject):
        return rows, [], False
    if not rows:
        return read(_named_subjects(pool, groups, tenant_id)), [], True
    if not weights.named_subjects_join:
        return rows, [], False
    matched = {row[0] for row in rows}
    named = read(_named_subjects(pool, groups, tenant_id))
    return rows, [row for row in named if row[0] not in matched], False


def _ordered(
    lexical: dict, stage: FirstStage, weights: "RankingWeights", share: dict, dense_weight: float
) -> list[uuid.UUID]:
    """Best first: the lexical value plus each signal's value times its weight.

    Ties keep BM25 order, neighbours after the candidates (a stable sort over
    the candidates, then the neighbours, in the order they were added).
    """
    keys = dict(lexical)
    for pk, value in stage.dense.items():
        keys[pk] += dense_weight * value
    for pk, offer in stage.spread.items():
        keys[pk] = keys.get(pk, 0.0) + share[offer.role] * offer.value
    for signal, weight in (
        (stage.coverage, weights.coverage),
        (stage.subject, weights.subject),
        (stage.when, weights.when),
        (stage.happening, weights.happening),
        (stage.narrating, weights.narrating),
        (stage.person, weights.person),
    ):
        for pk, value in signal.items():
            keys[pk] += weight * value
    return sorted(keys, key=keys.__getitem__, reverse=True)


def _telling(query: str, weights: "RankingWeights") -> str | None:
    """The signal (a ``FirstStage`` field) the candidates that say when take for ``query``, if any."""
    if weights.when and asking_when.asks_when(query):
        return "when"
    if weights.happening and asking_when.asks_about_happenings(query):
        return "happening"
    return None


def _counted_in_text(telling: str | None, groups, weights: "RankingWeights") -> bool:
    """Does SQLite count a signal over the candidates' text (what PostgreSQL reads with the rank)?"""
    counted = telling or (groups and (weights.coverage or weights.person))
    return bool(counted) and connection.vendor != "postgresql"


def _texts(rows: list[tuple], columns: list[str]) -> dict[uuid.UUID, tuple]:
    """Each candidate's (statement, summary), where the read carried them."""
    if STATEMENT not in columns:
        return {}
    said, summarised = columns.index(STATEMENT), columns.index(SUMMARY)
    return {row[0]: (row[said], row[summarised]) for row in rows}


def _annotations(
    embedder: str | None, groups, *, when: bool, unless_asking: bool, text: bool
) -> dict[str, Callable[[QuerySet], QuerySet]]:
    """What a candidate read adds, by column: each candidate's vector for its exact revision (with
    an embedder), the word groups it holds (PostgreSQL), whether it says when (PostgreSQL), its
    statement and summary (where a signal is counted over the text)."""
    annotations: dict[str, Callable[[QuerySet], QuerySet]] = {}
    if embedder:
        vector = MemoryVector.objects.filter(
            memory=OuterRef("pk"), memory_revision=OuterRef("revision"), embedder=embedder
        ).values("vector")[:1]
        annotations[DENSE_VECTOR] = lambda rows: rows.annotate(dense_vector=Subquery(vector))
    if groups:
        annotations[HELD] = lambda rows: episode_coverage.with_held_groups(rows, groups)
    if when:
        annotations[SAYS_WHEN] = lambda rows: asking_when.with_time_words(rows, unless_asking=unless_asking)
    if text:
        annotations[STATEMENT] = lambda rows: rows.annotate(said=KeyTextTransform("statement", "content"))
        annotations[SUMMARY] = lambda rows: rows.annotate(summarised=KeyTextTransform("summary", "content"))
    return annotations


def _told(
    stage: FirstStage,
    telling: str,
    told: dict[uuid.UUID, tuple],
    following: dict[uuid.UUID, Following],
    served_raw: Callable[[tuple], bool],
    weights: "RankingWeights",
) -> None:
    """Give ``telling`` (``when`` or ``happening``) to the raw candidates, and the turns after hits
    served ``raw``, that say when; ``narrating`` to those that narrate, for a question about doings.

    ``told``: the raw candidates that say when or narrate (``_telling_candidates``).
    """
    unless_asking = weights.asking_tells_nothing
    for pk in stage.spread:
        turn = following.get(pk)
        if pk in told or not turn or not served_raw(turn.columns):
            continue
        said = (
            asking_when.says_when(turn.statement, unless_asking=unless_asking),
            asking_when.narrates(turn.statement),
        )
        if any(said):
            told[pk] = said
    setattr(stage, telling, {pk: 1.0 for pk, (when, _) in told.items() if when})
    if telling == "happening" and weights.narrating:
        stage.narrating = {pk: 1.0 for pk, (_, narrates) in told.items() if narrates}


def _telling_candidates(
    raw: list[tuple], columns: list[str], texts: dict[uuid.UUID, tuple], unless_asking: bool
) -> dict[uuid.UUID, tuple]:
    """The raw candidates that say when or narrate, each with (says when, narrates): from the
    query's column (PostgreSQL), else from their text, which also tells whether they narrate."""
    if SAYS_WHEN in columns:
        says = columns.index(SAYS_WHEN)
        return {row[0]: (True, False) for row in raw if row[says]}
    return asking_when.telling_in_text({row[0]: texts[row[0]] for row in raw}, unless_asking=unless_asking)


def _named_subjects(pool: QuerySet, groups, tenant_id) -> QuerySet:
    """``subjects.named_subjects`` read as candidates are: BM25 0, the search vector as ``document``."""
    rows = subjects.named_subjects(pool, groups, tenant_id)
    rows = rows.annotate(rank=Value(0.0, output_field=FloatField()))
    return rows.alias(document=F("search_vector")) if connection.vendor == "postgresql" else rows


def _named(rows: list[tuple], groups) -> dict[uuid.UUID, int]:
    """The word groups each row's subject names (each distinct subject id read once)."""
    by_subject: dict[str, int] = {}
    for row in rows:
        if row[8] not in by_subject:
            by_subject[row[8]] = subjects.named_by(row[8], groups)
    return {row[0]: by_subject[row[8]] for row in rows}


def _coverage(
    turns: list[tuple], groups, held: int | None, named: dict, texts: dict[uuid.UUID, tuple]
) -> dict[uuid.UUID, float]:
    """Each raw turn's episode coverage, from the groups the query read (``held``) or from its text,
    and those its subject names."""
    if held is not None:
        bits = {row[0]: row[held] for row in turns}
    else:
        bits, groups = episode_coverage.held_in_text({row[0]: texts[row[0]] for row in turns}, groups)
    return episode_coverage.coverage(
        [(row[0], row[10], bits.get(row[0], 0) | named.get(row[0], 0)) for row in turns], groups
    )


def _person(
    query: str,
    raw: list[tuple],
    groups,
    held: int | None,
    named: dict,
    spread: dict[uuid.UUID, Spread],
    texts: dict[uuid.UUID, tuple],
) -> dict[uuid.UUID, float]:
    """Each raw candidate's share of the names the question writes that its episode holds, and the
    same for the turns next to its hits (``memory_core.named_people``); on SQLite, from the
    candidates' text."""
    mask = named_people.name_mask(query, groups)
    if not mask:
        return {}
    if held is not None:
        bits = {row[0]: row[held] for row in raw}
    else:
        bits, _ = episode_coverage.held_in_text({row[0]: texts[row[0]] for row in raw}, groups)
    people = named_people.with_named_people(
        [(row[0], row[10] or row[0], (bits.get(row[0]) or 0) | named.get(row[0], 0)) for row in raw], mask
    )
    return people | {pk: people[offer.source] for pk, offer in spread.items() if offer.source in people}


def _spread(
    hits: list[tuple],
    lexical: dict,
    pool: QuerySet,
    share: dict[str, float],
    served_raw: Callable[[tuple], bool],
) -> tuple[dict[uuid.UUID, Spread], dict[uuid.UUID, Following]]:
    """Give each turn next to a hit the hit's lexical value; keep the one that weighs most.

    ``share`` is the weight a neighbour's value takes, by its role (``_roles``). Also returns
    the turns after the hits as read, by id (what each says, and its policy columns).
    """
    beside = adjacent(
        [(row[0], row[10]) for row in hits],
        pool,
        source_kind=EvidenceSource.Kind.CONVERSATION,
        after=3 if share[FOLLOWS_ANSWER] else 2,
        after_columns=_POLICY_COLUMNS,
    )
    spread: dict[uuid.UUID, Spread] = {}
    for hit in (row[0] for row in hits):
        if lexical[hit] <= 0 or hit not in beside:
            continue
        for pk, role in _roles(beside[hit], share, served_raw):
            offer = Spread(lexical[hit], hit, role)
            held = spread.get(pk)
            if held is None or share[role] * offer.value > share[held.role] * held.value:
                spread[pk] = offer
    following = {turn.id: turn for placed in beside.values() for turn in placed.following if turn.id}
    return spread, following


def _roles(turn: Placed, share: dict[str, float], served_raw: Callable[[tuple], bool]) -> list[tuple]:
    """The turns around a hit that take its value, each with its role.

    The turn before, and the one after, are ``beside`` it; the one after a hit
    that asks ``answers`` it. When the turn after the hit asks (the listener's
    question about it), the one after that ``follows``: the teller's reply.
    When the hit asks and the turn after its answer asks again ("what was it
    like?"), the reply to that ``follows_answer``. Only a turn the policy serves
    ``raw`` (``served_raw``, given its policy columns) counts as asking.
    """

    def asks(n: int) -> bool:
        after = turn.after(n)
        return bool(after.id) and asking_when.asks(after.statement) and served_raw(after.columns)

    hit_asks = asking_when.asks(turn.statement)
    roles = [(turn.before, BESIDE), (turn.after(0).id, ANSWERS if hit_asks else BESIDE)]
    if share[FOLLOWS] and asks(0):
        roles.append((turn.after(1).id, FOLLOWS))
    if share[FOLLOWS_ANSWER] and hit_asks and turn.after(0).id and asks(1):
        roles.append((turn.after(2).id, FOLLOWS_ANSWER))
    return [(pk, role) for pk, role in roles if pk]


def _decided_raw(policy: ReadPolicy, columns: tuple, context: dict, decided: dict[tuple, bool]) -> bool:
    if columns not in decided:
        memory = Memory(**dict(zip(_POLICY_COLUMNS[:-1], columns[:-1], strict=True)))
        memory.fenced = bool(columns[-1])
        decided[columns] = policy.decide(memory, context).mode == "raw"
    return decided[columns]
