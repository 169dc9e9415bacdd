"""Episode context: the memories next to a recalled one in the same episode (evidence source).

An episode is the evidence source a memory's served revision rests on (a
conversation session, a document). Its memories are in the order things happened:
an event's ``occurred_at``, then the order the client submitted them (request time,
then the position in a batch), never the order a worker applied them in.
Neighbours are drawn from the same candidate rows as the search itself (tenant,
lifecycle, TTL, filters, ``valid_at``), so recall then passes each through the
read policy, return modes, fences and audit exactly like a hit. A memory's
episode and the moment it happened are stored on its row by the executor
(``Memory.episode``, ``Memory.happened_at``), so the database puts an episode
in order. Two queries whatever the number of hits.
"""

import uuid

from django.db.models import QuerySet
from django.db.models.functions import Coalesce

from evidence.models import EvidenceSource
from memory_core.models import Memory

MAX_EPISODE_ROWS = 5000  # memories read per search to place the hits in their episodes
# When it happened (``Memory.happened_at``), then when and where in its request it was submitted.
EPISODE_ORDER = (
    "episode",
    Coalesce("happened_at", "submitted_at", "created_at").asc(),
    Coalesce("submitted_at", "created_at").asc(),
    "submission_index",
    "id",
)
_UNREAD = object()  # a hit read without its episode column


def neighbours(hits: list[Memory], candidates: QuerySet, *, around: int) -> dict[uuid.UUID, dict]:
    """Return, per hit, up to ``around`` candidate memories before and after it in its episode."""
    if not hits or around < 1:
        return {}
    episode, chains = _episodes(hits)
    members = {memory_id for chain in chains.values() for memory_id in chain}
    allowed = set(candidates.filter(id__in=members).values_list("id", flat=True))
    hit_ids = {memory.id for memory in hits}
    placed: dict[uuid.UUID, dict] = {}
    for memory_id, source in episode.items():
        chain = [pk for pk in chains.get(source, []) if pk in allowed or pk in hit_ids]
        if memory_id not in chain:
            continue
        at = chain.index(memory_id)
        placed[memory_id] = {
            "before": [pk for pk in chain[max(at - around, 0) : at] if pk in allowed],
            "after": [pk for pk in chain[at + 1 : at + 1 + around] if pk in allowed],
        }
    return placed


def adjacent(
    hits: list[Memory], candidates: QuerySet, *, source_kind: str
) -> dict[uuid.UUID, dict[str, uuid.UUID]]:
    """Return, per hit resting on a source of ``source_kind``, the candidates ``before`` and ``after`` it.

    Only the true neighbours: one a search's filters leave out is not replaced by
    the next, so the candidates are checked for at most two ids a hit.
    """
    if not hits:
        return {}
    episode, chains = _episodes(hits, source_kind=source_kind)
    around: dict[uuid.UUID, dict[str, uuid.UUID]] = {}
    for memory_id, source in episode.items():
        chain = chains.get(source, [])
        if memory_id in chain:
            at = chain.index(memory_id)
            sides = {"before": chain[at - 1 : at] if at else [], "after": chain[at + 1 : at + 2]}
            around[memory_id] = {side: pks[0] for side, pks in sides.items() if pks}
    wanted = {pk for sides in around.values() for pk in sides.values()}
    allowed = set(candidates.filter(id__in=wanted).values_list("id", flat=True)) if wanted else set()
    return {hit: {side: pk for side, pk in sides.items() if pk in allowed} for hit, sides in around.items()}


def _episodes(
    hits: list[Memory], *, source_kind: str = ""
) -> tuple[dict[uuid.UUID, uuid.UUID], dict[uuid.UUID, list[uuid.UUID]]]:
    """Each hit's episode (``Memory.episode``; only sources of ``source_kind`` if given), and each
    episode's memories in order: one query, two when a hit came without its episode."""
    episode = {memory.id: memory.__dict__.get("episode", _UNREAD) for memory in hits}
    unread = [memory_id for memory_id, source in episode.items() if source is _UNREAD]
    if unread:
        episode.update(Memory.objects.filter(pk__in=unread).values_list("id", "episode"))
    episode = {memory_id: source for memory_id, source in episode.items() if source}
    sources = set(episode.values())
    members = Memory.objects.filter(episode__in=sources)
    if source_kind:
        kind = EvidenceSource.objects.filter(id__in=sources, kind=source_kind).values("id")
        members = members.filter(episode__in=kind)
    chains: dict[uuid.UUID, list[uuid.UUID]] = {}
    for source, memory_id in members.order_by(*EPISODE_ORDER).values_list("episode", "id")[:MAX_EPISODE_ROWS]:
        chains.setdefault(source, []).append(memory_id)
    return episode, chains
