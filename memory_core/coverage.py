"""Episode coverage: how much of the question a turn's episode says between its turns.

"Where does Matthew live at the moment?" matches, word for word, a turn of
someone else's chat ("we saw Coldplay live") better than Matthew's own "We
moved! We're in a duplex in Fairview now". The session where Matthew talks
holds "Matthew" and the other words of the question across several turns;
the other chat holds only "live". Each raw candidate of a conversation
episode takes its episode's coverage: the share of the question's IDF that
the episode's raw candidates hold between them (each word group counted
once). A turn is lifted by the session it was said in, as a passage is by
its document.

Only candidates the read policy serves ``raw`` hold words for their episode
and take a value, so a masked or fenced turn never moves another. PostgreSQL
reads which word groups a candidate holds in the same query as its rank, and
IDF from the tenant's document frequencies (one more query); SQLite, as its
lexical ranking does, reads the candidates' text and counts over them.
"""

import uuid
from dataclasses import dataclass

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import IntegerField, QuerySet

from memory_core.search import Matched, idf, query_groups, stems_of, text_stems


@dataclass(frozen=True)
class WordGroups:
    """The question's word groups as the search index holds them (stems), with their IDF."""

    stems: list[frozenset[str]]
    weights: list[float]

    def share(self, held: int) -> float:
        """Share of the question's IDF in the groups whose bits are set in ``held``."""
        total = sum(self.weights)
        return sum(w for n, w in enumerate(self.weights) if held >> n & 1) / total if total else 0.0


def word_groups(query: str, tenant_id, *, using: str = DEFAULT_DB_ALIAS) -> WordGroups:
    """The query's groups; on PostgreSQL with the tenant's IDF read from ``using`` (on SQLite, set
    by ``held_in_text``)."""
    stems = [frozenset(stems_of(group)) for group in query_groups(query)]
    if connection.vendor != "postgresql" or not stems:
        return WordGroups(stems, [1.0] * len(stems))
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT c.documents, t.lexeme, t.documents FROM memory_core_searchcorpus c"
            " LEFT JOIN memory_core_searchterm t ON t.tenant_id = c.tenant_id AND t.lexeme = ANY(%s)"
            " WHERE c.tenant_id = %s",
            [sorted(set().union(*stems)), tenant_id],
        )
        rows = cursor.fetchall()
    documents = max([row[0] for row in rows] or [1])
    frequency = {lexeme: count for _, lexeme, count in rows if lexeme}
    weights = [idf(documents, min(sum(frequency.get(s, 0) for s in group), documents)) for group in stems]
    return WordGroups(stems, weights)


def with_held_groups(candidates: QuerySet, groups: WordGroups) -> QuerySet:
    """PostgreSQL: annotate ``held``, a bit per word group the candidate's search vector holds."""
    return candidates.annotate(
        held=Matched("document", [(group, 1 << n) for n, group in enumerate(groups.stems)], IntegerField())
    )


def held_in_text(
    texts: dict[uuid.UUID, tuple], groups: WordGroups
) -> tuple[dict[uuid.UUID, int], WordGroups]:
    """SQLite: the groups each memory's (statement, summary) holds, and IDF counted over these
    memories."""
    held = {}
    for pk, (statement, summary) in texts.items():
        words = text_stems(f"{statement or ''} {summary or ''}")
        held[pk] = sum(1 << n for n, group in enumerate(groups.stems) if words & group)
    counts = [sum(1 for bits in held.values() if bits >> n & 1) for n in range(len(groups.stems))]
    return held, WordGroups(groups.stems, [idf(max(len(held), 1), count) for count in counts])


def coverage(turns: list[tuple[uuid.UUID, uuid.UUID, int]], groups: WordGroups) -> dict[uuid.UUID, float]:
    """Each (id, episode, held) raw turn's value: the share of the question its episode holds."""
    episodes: dict[uuid.UUID, int] = {}
    for _, episode, held in turns:
        episodes[episode] = episodes.get(episode, 0) | held
    shares = {episode: groups.share(held) for episode, held in episodes.items()}
    return {pk: shares[episode] for pk, episode, _ in turns}
