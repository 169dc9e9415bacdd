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
class Placed:
    """A hit's candidate neighbours in its episode (and the turn after the next), what the hit and
    the turn after it say (either may ask), and the columns asked for of the turn after it."""

    before: uuid.UUID | None
    after: uuid.UUID | None
    after_next: uuid.UUID | None
    statement: str | None
    after_statement: str | None
    after_columns: tuple = ()


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
    after_columns: tuple[str, ...] = (),
) -> dict[uuid.UUID, Placed]:
    """Place each (id, episode) hit resting on a source of ``source_kind``: the candidates
    before it, after it and after that, what it and the turn after it say, and that turn's
    ``after_columns`` (as ``candidates`` has them).

    Only the true neighbours: one a search's filters leave out is not replaced
    by the next. One query: the database orders the hits' episodes, takes each
    hit's neighbours (``LAG``/``LEAD``) and checks them against the
    candidates, so the episodes' rows are never shipped.
    """
    alias = candidates.db  # where the search reads: the replica when the view opted in to it
    # A UUID as this database's driver takes it (SQLite stores one as 32 hex digits).
    to_db = functools.partial(Memory._meta.pk.get_db_prep_value, connection=connections[alias])
    episodes = sorted({to_db(episode) for _, episode in hits if episode})
    if not episodes:
        return {}
    table, ids = Memory._meta.db_table, [to_db(pk) for pk, _ in hits]
    near, near_params = candidates.values("id", *after_columns).query.get_compiler(using=alias).as_sql()
    (said, said_params), (next_said, next_params) = _statement_sql(alias, "hit"), _statement_sql(alias, "nxt")
    quote = connections[alias].ops.quote_name
    columns = "".join(f", aft.{quote(name)}" for name in after_columns)
    # Only table names and compiled SQL are formatted in; every value is a parameter. The
    # candidates are read once, for the neighbours only, and joined three times.
    sql = (
        "WITH chain AS (SELECT id, LAG(id) OVER w AS prior_id, LEAD(id) OVER w AS next_id,"  # noqa: S608
        f" LEAD(id, 2) OVER w AS then_id FROM {table} WHERE episode IN ({_marks(episodes)})"
        f" AND episode IN (SELECT id FROM {EvidenceSource._meta.db_table} WHERE id IN ({_marks(episodes)})"
        " AND kind = %s)"
        f" WINDOW w AS (PARTITION BY episode ORDER BY {_order_sql(alias)})),"
        f" hits AS (SELECT id, prior_id, next_id, then_id FROM chain WHERE id IN ({_marks(ids)})),"
        f" near AS (SELECT * FROM ({near}) near WHERE near.id IN (SELECT prior_id FROM hits"
        " UNION ALL SELECT next_id FROM hits UNION ALL SELECT then_id FROM hits))"
        f" SELECT hits.id, fore.id, aft.id, thn.id, {said}, {next_said}{columns} FROM hits"
        f" JOIN {table} hit ON hit.id = hits.id LEFT JOIN {table} nxt ON nxt.id = next_id"
        " LEFT JOIN near fore ON fore.id = prior_id LEFT JOIN near aft ON aft.id = next_id"
        " LEFT JOIN near thn ON thn.id = then_id"
    )
    params = [*episodes, *episodes, source_kind, *ids, *near_params, *said_params, *next_params]
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    to_uuid = Memory._meta.pk.to_python

    def pk(value) -> uuid.UUID | None:
        return to_uuid(value) if value else None

    return {
        to_uuid(hit): Placed(
            pk(prior), pk(following), pk(then), says, next_says, tuple(rest) if following else ()
        )
        for hit, prior, following, then, says, next_says, *rest in rows
    }


def _marks(values: list) -> str:
    return ", ".join(["%s"] * len(values))


@functools.lru_cache(maxsize=4)
def _order_sql(alias: str) -> str:
    """``EPISODE_ORDER`` within an episode, as this database's SQL (the one definition of the order)."""
    compiler = Memory.objects.order_by(*EPISODE_ORDER[1:]).query.get_compiler(using=alias)
    return ", ".join(sql for _, (sql, params, _) in compiler.get_order_by())


@functools.lru_cache(maxsize=8)
def _statement_sql(alias: str, row: str) -> tuple[str, tuple]:
    """The statement of the memory row named ``row`` as this database's SQL, and its parameters."""
    query = Memory.objects.values_list(KeyTextTransform("statement", "content")).query
    (_, (sql, params), _), *_ = query.get_compiler(using=alias).get_select()[0]
    table = connections[alias].ops.quote_name(Memory._meta.db_table)
    return sql.replace(f"{table}.", f"{row}."), tuple(params)


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
