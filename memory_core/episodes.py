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
in order. Two queries whatever the number of hits (one for ``adjacent``).
"""

import functools
import uuid
from dataclasses import dataclass

from django.db import connections
from django.db.models import QuerySet
from django.db.models.fields.json import KeyTextTransform
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


@dataclass(frozen=True)
class Following:
    """A turn after a hit: its id when it is a candidate (None when the search's filters leave it
    out), what it says, and the columns asked for of it (as the candidates have them)."""

    id: uuid.UUID | None
    statement: str | None
    columns: tuple = ()


NOTHING_FOLLOWS = Following(None, None)


@dataclass(frozen=True)
class Placed:
    """A hit's candidate neighbour before it in its episode, what the hit says (it may ask), and
    the turns after it, nearest first."""

    before: uuid.UUID | None
    statement: str | None
    following: tuple[Following, ...] = ()

    def after(self, n: int) -> Following:
        """The ``n``-th turn after the hit (0: the next), or ``NOTHING_FOLLOWS`` past the episode's end."""
        return self.following[n] if n < len(self.following) else NOTHING_FOLLOWS


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
    hits: list[tuple[uuid.UUID, uuid.UUID | None]],
    candidates: QuerySet,
    *,
    source_kind: str,
    after: int = 1,
    after_columns: tuple[str, ...] = (),
) -> dict[uuid.UUID, Placed]:
    """Place each (id, episode) hit resting on a source of ``source_kind``: the candidate before
    it, what it says, and the ``after`` turns after it (each: a candidate or not, what it says,
    its ``after_columns``).

    Only the true neighbours: one a search's filters leave out is not replaced
    by the next. One query: the database orders the hits' episodes, takes each
    hit's neighbours (``LAG``/``LEAD``) and checks them against the
    candidates (read once, for those neighbours only), so the episodes' rows
    are never shipped.
    """
    alias = candidates.db  # where the search reads: the replica when the view opted in to it
    # A UUID as this database's driver takes it (SQLite stores one as 32 hex digits).
    to_db = functools.partial(Memory._meta.pk.get_db_prep_value, connection=connections[alias])
    episodes = sorted({to_db(episode) for _, episode in hits if episode})
    if not episodes:
        return {}
    table, ids = Memory._meta.db_table, [to_db(pk) for pk, _ in hits]
    near, near_params = candidates.values("id", *after_columns).query.get_compiler(using=alias).as_sql()
    quote = connections[alias].ops.quote_name
    steps = range(1, after + 1)
    said, said_params = _statement_sql(alias)
    # What the hit and each turn after it but the last say, read as the window passes: no join.
    leads = ", said0" + "".join(
        f", LEAD(id, {step}) OVER w AS next{step}_id"
        + (f", LEAD(said0, {step}) OVER w AS said{step}" if step < after else "")
        for step in steps
    )
    selected = "".join(
        f", n{step}.id, "
        + (f"hits.said{step}" if step < after else "NULL")
        + "".join(f", n{step}.{quote(name)}" for name in after_columns)
        for step in steps
    )
    joined = "".join(f" LEFT JOIN near n{step} ON n{step}.id = next{step}_id" for step in steps)
    unions = "".join(f" UNION ALL SELECT next{step}_id FROM hits" for step in steps)  # noqa: S608
    # Only table and column names, step numbers and compiled SQL are formatted in; every value is
    # a parameter.
    sql = (
        f"WITH chain AS (SELECT id, LAG(id) OVER w AS prior_id{leads} FROM (SELECT *, {said} AS said0"  # noqa: S608
        f" FROM {table} WHERE episode IN ({_marks(episodes)}) AND episode IN (SELECT id"
        f" FROM {EvidenceSource._meta.db_table} WHERE id IN ({_marks(episodes)}) AND kind = %s)) {table}"
        f" WINDOW w AS (PARTITION BY episode ORDER BY {_order_sql(alias)})),"
        f" hits AS (SELECT * FROM chain WHERE id IN ({_marks(ids)})),"
        f" near AS (SELECT * FROM ({near}) near WHERE near.id IN (SELECT prior_id FROM hits{unions}))"
        f" SELECT hits.id, fore.id, hits.said0{selected} FROM hits"
        f" LEFT JOIN near fore ON fore.id = prior_id{joined}"
    )
    params = [*said_params, *episodes, *episodes, source_kind, *ids, *near_params]
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    to_uuid = Memory._meta.pk.to_python
    return {to_uuid(hit): _placed(prior, says, rest, len(after_columns)) for hit, prior, says, *rest in rows}


def _to_uuid(value) -> uuid.UUID | None:
    return Memory._meta.pk.to_python(value) if value else None


def _placed(prior, says: str | None, rest: list, width: int) -> Placed:
    """A row of ``adjacent`` as a ``Placed``: per turn after the hit, its candidate id, what it
    says and its ``width`` columns."""
    step = 2 + width
    following = []
    for at in range(0, len(rest), step):
        candidate, statement, *columns = rest[at : at + step]
        following.append(Following(_to_uuid(candidate), statement, tuple(columns) if candidate else ()))
    return Placed(_to_uuid(prior), says, tuple(following))


def _marks(values: list) -> str:
    return ", ".join(["%s"] * len(values))


@functools.lru_cache(maxsize=4)
def _order_sql(alias: str) -> str:
    """``EPISODE_ORDER`` within an episode, as this database's SQL (the one definition of the order)."""
    compiler = Memory.objects.order_by(*EPISODE_ORDER[1:]).query.get_compiler(using=alias)
    return ", ".join(sql for _, (sql, params, _) in compiler.get_order_by())


@functools.lru_cache(maxsize=4)
def _statement_sql(alias: str) -> tuple[str, tuple]:
    """A memory's statement as this database's SQL over the memory table, and its parameters."""
    query = Memory.objects.values_list(KeyTextTransform("statement", "content")).query
    (_, (sql, params), _), *_ = query.get_compiler(using=alias).get_select()[0]
    return sql, tuple(params)


def _episodes(hits: list[Memory]) -> tuple[dict[uuid.UUID, uuid.UUID], dict[uuid.UUID, list[uuid.UUID]]]:
    """Each hit's episode (``Memory.episode``), and each episode's memories in order: one query,
    two when a hit came without its episode."""
    episode = {memory.id: memory.__dict__.get("episode", _UNREAD) for memory in hits}
    unread = [memory_id for memory_id, source in episode.items() if source is _UNREAD]
    if unread:
        episode.update(Memory.objects.filter(pk__in=unread).values_list("id", "episode"))
    episode = {memory_id: source for memory_id, source in episode.items() if source}
    sources = set(episode.values())
    members = Memory.objects.filter(episode__in=sources)
    chains: dict[uuid.UUID, list[uuid.UUID]] = {}
    for source, memory_id in members.order_by(*EPISODE_ORDER).values_list("episode", "id")[:MAX_EPISODE_ROWS]:
        chains.setdefault(source, []).append(memory_id)
    return episode, chains
