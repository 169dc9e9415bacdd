"""The first stage: the order in which recall's windows are reranked, before any window is.

Windows are reranked one at a time, so what decides which memories ever reach
a window decides what can be served. The first ``POOL`` lexical candidates are
reordered here by two signals besides their BM25 (relative to the best):

- **dense**: with an embedder, the cosine of the query's vector with the
  candidate's revision vector, so a memory that words rank 150th (it shares
  only a name with the question) can still reach the first window;
- **episode**: the turns (``episodic_event`` memories of a ``conversation`` source) just before and after
  each of the best ``SPREAD_HITS`` turns that match, in their episode
  (``memory_core.episodes``), take that hit's lexical value, so an answer
  that says "Finally, yes! On Tuesday night" comes up
  with the question it answers, though it shares no word with the search.

Only a hit the read policy serves ``raw`` gives a neighbour anything, and only
a candidate served ``raw`` gets a dense value, so hidden text never moves an
item; the signals go on to the windows (``ranking.rerank``), where each item's
explanation shows them.
"""

import uuid
from dataclasses import dataclass, field

from django.db.models import OuterRef, QuerySet, Subquery

from evidence.models import EvidenceSource
from memory_core.embeddings import active_embedder, query_vector, similarities
from memory_core.episodes import adjacent
from memory_core.models import Memory, MemoryVector
from memory_core.read_policy import ReadPolicy

POOL = 1000  # lexical candidates the first stage reorders
# Best raw turns whose neighbours take their lexical value (about two pages). Only events of a
# conversation: memories citing one document share an "episode" too, but the order they were
# proposed in means nothing.
SPREAD_HITS = 20
# What the read policy decides on (ReadPolicy.decide), fetched with each candidate.
_POLICY_COLUMNS = ("sensitivity", "scope", "type", "state", "subject_kind", "subject_id", "fenced")


@dataclass(frozen=True)
class Spread:
    """A neighbour's episode signal: the lexical value of the adjacent hit it comes from."""

    value: float
    source: uuid.UUID


@dataclass
class FirstStage:
    """The candidates in first-stage order, each one's BM25 rank, and what the signals gave."""

    order: list[uuid.UUID]
    ranks: dict[uuid.UUID, float]
    lexical_rows: int  # how many of ``order`` came from the lexical candidates (the rest: neighbours)
    spread: dict[uuid.UUID, Spread] = field(default_factory=dict)
    dense: dict[uuid.UUID, float] = field(default_factory=dict)

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
    dense_weight: float,
    episode_weight: float,
) -> FirstStage | None:
    """Reorder the first ``POOL`` lexical candidates; None when there is nothing to reorder by.

    One query (ids, BM25, what the policy decides on and, with an embedder,
    each candidate's vector for its exact revision), plus the three of placing
    the best hits in their episodes.
    """
    embedder = active_embedder()
    with_dense = bool(embedder.dimensions and dense_weight)
    if not query.strip() or not (with_dense or episode_weight):
        return None
    columns = ["pk", "revision", "rank", *_POLICY_COLUMNS]
    if with_dense:
        vector = MemoryVector.objects.filter(
            memory=OuterRef("pk"), memory_revision=OuterRef("revision"), embedder=embedder.name
        ).values("vector")[:1]
        candidates = candidates.annotate(dense_vector=Subquery(vector))
        columns.append("dense_vector")
    rows = list(candidates.values_list(*columns)[:POOL])
    decided: dict[tuple, bool] = {}  # a handful of distinct (sensitivity, scope, …, subject) per search
    raw = {row[0] for row in rows if _decided_raw(policy, tuple(row[3:10]), context, decided)}
    ranks = {row[0]: float(row[2] or 0.0) for row in rows}
    best = max(ranks.values(), default=0.0)
    lexical = {pk: (rank / best if best > 0 else 0.0) for pk, rank in ranks.items()}
    stage = FirstStage(order=[], ranks=ranks, lexical_rows=len(rows))
    if with_dense:
        with_vector = [row for row in rows if row[0] in raw and row[10] is not None]
        stage.dense = dict(
            zip(
                [row[0] for row in with_vector],
                similarities(query_vector(embedder.name, query), [row[10] for row in with_vector]),
                strict=True,
            )
        )
    if episode_weight:
        turns = [row for row in rows if row[0] in raw and row[5] == Memory.Type.EPISODIC_EVENT]
        stage.spread = _spread(turns[:SPREAD_HITS], lexical, pool.filter(type=Memory.Type.EPISODIC_EVENT))
    keys = {
        pk: lexical.get(pk, 0.0)
        + dense_weight * stage.dense.get(pk, 0.0)
        + episode_weight * (stage.spread[pk].value if pk in stage.spread else 0.0)
        for pk in [*ranks, *(pk for pk in stage.spread if pk not in ranks)]
    }
    position = {pk: n for n, pk in enumerate(keys)}  # ties keep BM25 order, neighbours after
    stage.order = sorted(keys, key=lambda pk: (-keys[pk], position[pk]))
    return stage


def _spread(hits: list[tuple], lexical: dict, pool: QuerySet) -> dict[uuid.UUID, Spread]:
    """Give each turn next to a hit the best lexical value of the hits it is next to."""
    hit_memories = [Memory(id=row[0], revision=row[1]) for row in hits]
    beside = adjacent(hit_memories, pool, source_kind=EvidenceSource.Kind.CONVERSATION)
    spread: dict[uuid.UUID, Spread] = {}
    for hit in (row[0] for row in hits):  # best first: a neighbour keeps the best hit it sits by
        for pk in beside.get(hit, []):
            if pk not in spread and lexical[hit] > 0:
                spread[pk] = Spread(lexical[hit], hit)
    return spread


def _decided_raw(policy: ReadPolicy, columns: tuple, context: dict, decided: dict[tuple, bool]) -> bool:
    if columns not in decided:
        memory = Memory(**dict(zip(_POLICY_COLUMNS[:-1], columns[:-1], strict=True)))
        memory.fenced = bool(columns[-1])
        decided[columns] = policy.decide(memory, context).mode == "raw"
    return decided[columns]
