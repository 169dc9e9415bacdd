"""Lexical ranking: PostgreSQL full-text search on a stored, indexed vector; a plain path on SQLite.

``search_document()`` is the one definition of what is searched. Memories
store it in ``search_vector`` (a trigger computes it on every write,
migration 0006; a test holds the two equal) under a GIN index, so matching
and ranking read a stored vector instead of parsing text per match. History
rows (recall ``valid_at``) are ranked from the expression itself.
"""

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import connection
from django.db.models import F, FloatField, Q, QuerySet, Value
from django.db.models.fields.json import KeyTextTransform

from memory_core.models import Memory

MAX_TERMS = 12


def search_document() -> SearchVector:
    return SearchVector(
        KeyTextTransform("statement", "content"), KeyTextTransform("summary", "content"), config="english"
    )


def ranked(memories: QuerySet, query: str) -> QuerySet:
    """Return ``memories`` matching ``query``, best first: text rank, then confidence, then recency."""
    query = " ".join(query.split()[:MAX_TERMS])
    if not query:
        ordered = memories.annotate(rank=Value(0.0, output_field=FloatField()))
    elif connection.vendor == "postgresql":
        terms = SearchQuery(query, search_type="websearch", config="english")
        document = F("search_vector") if memories.model is Memory else search_document()
        ordered = (
            memories.annotate(document=document)
            .filter(document=terms)
            .annotate(rank=SearchRank(F("document"), terms))
        )
    else:
        match = Q()
        for term in query.split():
            match |= Q(content__statement__icontains=term) | Q(content__summary__icontains=term)
        ordered = memories.filter(match).annotate(rank=Value(1.0, output_field=FloatField()))
    return ordered.order_by("-rank", "-confidence", "-updated_at", "id")
