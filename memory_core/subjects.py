"""The question's person: a memory whose subject the question names is about what it asks.

"Who is Caroline working for now?" is about Caroline's memories, whether or
not each of her turns says her name: a client that files one subject per
speaker ("c1-caroline") says who each turn is by without writing "Caroline:"
into its text. Each raw candidate takes the share of the question's IDF that
its subject id names (``named_by``, by the same stems as the text). When no
word of the question matches any memory, the memories of the subjects it
names are the candidates (``named_subjects``), so a question about a person
who is on record never finds nothing.

Only candidates the read policy serves ``raw`` take a value or stand in for
an empty match, so the subject of a withheld memory never moves an item.
"""

import re

from django.db import connection, connections
from django.db.models import QuerySet

from memory_core.coverage import WordGroups
from memory_core.models import Memory
from memory_core.search import text_stems

MAX_SUBJECTS = 100_000  # distinct subject ids a question is matched against
_SEPARATORS = re.compile(r"[^a-z0-9]+")
# A loose index scan of memory_subject_idx (tenant_id, subject_kind, subject_id, state): each step
# jumps to the next (kind, id) after the last, so the cost grows with the subjects, not the memories.
_DISTINCT_SUBJECTS = """
WITH RECURSIVE subjects(kind, id) AS (
    (SELECT subject_kind, subject_id FROM memory_core_memory WHERE tenant_id = %(tenant)s
     ORDER BY subject_kind, subject_id LIMIT 1)
    UNION ALL
    SELECT next.kind, next.id FROM subjects, LATERAL (
        SELECT subject_kind AS kind, subject_id AS id FROM memory_core_memory
        WHERE tenant_id = %(tenant)s AND (subject_kind, subject_id) > (subjects.kind, subjects.id)
        ORDER BY subject_kind, subject_id LIMIT 1
    ) AS next
)
SELECT id FROM subjects LIMIT %(most)s
"""


def named_by(subject_id: str, groups: WordGroups) -> int:
    """A bit per word group the subject id names ("c1-caroline" names "Caroline")."""
    words = text_stems(_SEPARATORS.sub(" ", subject_id.lower()))
    return sum(1 << n for n, group in enumerate(groups.stems) if words & group)


def named_subjects(pool: QuerySet, groups: WordGroups, tenant_id) -> QuerySet:
    """The memories of ``pool`` whose subject id names a word group of the question, newest first.

    The tenant's distinct subject ids are read from ``memory_subject_idx``
    (on PostgreSQL one index probe per subject, not a scan of its memories),
    named in Python, and the memories of those named are read by the same index.
    """
    starts = _word_starts(groups)
    named = [s for s in _subject_ids(tenant_id, pool.db) if starts.search(s.lower()) and named_by(s, groups)]
    return pool.filter(subject_id__in=named).order_by("-updated_at", "id")


def _word_starts(groups: WordGroups) -> re.Pattern:
    """A word beginning as one of the groups' stems: what a named subject id contains.

    A stem begins the words it stands for but for a final "i" ("happi" for
    "happy"); the cheap test comes before stemming each id.
    """
    starts = sorted({stem.removesuffix("i") or stem for group in groups.stems for stem in group})
    return re.compile(r"(^|[^a-z0-9])(" + "|".join(map(re.escape, starts)) + ")")


def _subject_ids(tenant_id, using: str) -> list[str]:
    """The tenant's distinct subject ids (of every kind), at most ``MAX_SUBJECTS``, read from ``using``."""
    if connection.vendor != "postgresql":
        rows = Memory.objects.using(using).filter(tenant_id=tenant_id).values_list("subject_id", flat=True)
        return list(rows.distinct().order_by("subject_id")[:MAX_SUBJECTS])
    with connections[using].cursor() as cursor:
        cursor.execute(_DISTINCT_SUBJECTS, {"tenant": tenant_id, "most": MAX_SUBJECTS})
        return list(dict.fromkeys(subject for (subject,) in cursor.fetchall()))
