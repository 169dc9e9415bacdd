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

from django.db.models import QuerySet

from memory_core.coverage import WordGroups
from memory_core.search import text_stems

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def named_by(subject_id: str, groups: WordGroups) -> int:
    """A bit per word group the subject id names ("c1-caroline" names "Caroline")."""
    words = text_stems(_SEPARATORS.sub(" ", subject_id.lower()))
    return sum(1 << n for n, group in enumerate(groups.stems) if words & group)


def named_subjects(pool: QuerySet, groups: WordGroups) -> QuerySet:
    """The memories of ``pool`` whose subject id may name a word group, newest first.

    A stem begins the words it stands for but for a final "i" ("happi" for
    "happy"), so the filter is a regular expression on word starts;
    ``named_by`` then says which ones do.
    """
    starts = sorted({stem.removesuffix("i") or stem for stem in set().union(*groups.stems)})
    pattern = r"(^|[^a-z0-9])(" + "|".join(re.escape(start) for start in starts) + ")"
    return pool.filter(subject_id__iregex=pattern).order_by("-updated_at", "id")
