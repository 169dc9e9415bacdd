"""Lexical ranking with BM25 semantics: any query term matches, rare terms dominate, long memories weigh less.

``search_document()`` is the one definition of what is searched (statement
and summary). A query is cut into words (stop words dropped); each word
becomes a group of forms: itself, its lemmas, their British or American
spellings and derivations (``memory_core.morphology``), and the inflections
of all (``lemminflect``), so "won" finds "win", "bought" finds "buy" and
"summarise" finds "summaries"; two words of one group count once. A memory
scores, per group it contains, the group's IDF, times BM25's length
normalisation (term frequency counts once: memories are short statements).

PostgreSQL: stored ``search_vector`` under a GIN index (on memories and on their
history rows, which point-in-time recall ranks; without GIN's pending list, so a
search right after a large load reads the index, not an unsorted list: migration
0023), its arithmetic in float8, per-tenant document
frequencies and lengths of active memories kept by triggers (migration
0009). Candidates come from the rarest groups first, until about
``CANDIDATES`` rows are selected (and never more than ``MAX_CANDIDATES``):
common groups still add to the score of those candidates, but do not widen
the set, so top-k stays cheap whatever the tenant size.

SQLite (the embedded default): the same analysis with the Snowball English
stemmer in Python; statistics over the recallable rows of this very search.
"""

import functools
import math
import re

from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connection, connections
from django.db.models import (
    Case,
    Count,
    Expression,
    F,
    FloatField,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Length

from memory_core.morphology import variants

MAX_TERMS = 12
CANDIDATES = 1000
MAX_CANDIDATES = 5000
SQLITE_RANKED = 500
K1, B = 1.2, 0.75
_WORD = re.compile(r"[a-z0-9]+")
# PostgreSQL's english.stop, so both backends drop the same words.
STOP_WORDS = frozenset(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
    her hers herself it its itself they them their theirs themselves what which who whom this that
    these those am is are was were be been being have has had having do does did doing a an the and
    but if or because as until while of at by for with about against between into through during
    before after above below to from up down in out on off over under again further then once here
    there when where why how all any both each few more most other some such no nor not only own
    same so than too very s t can will just don should now""".split()  # noqa: SIM905
)
# "What kind of …", "which types of …": before "of", these frame the question (and would match
# "that's so kind of you").
FRAME_NOUNS = frozenset({"kind", "kinds", "sort", "sorts", "type", "types"})


def search_document() -> SearchVector:
    return SearchVector(
        KeyTextTransform("statement", "content"), KeyTextTransform("summary", "content"), config="english"
    )


def query_groups(text: str) -> list[tuple[str, ...]]:
    """Return each meaningful query word with its lemmas and their inflections (the word first).

    The noun of a question's frame ("what kind of workshop") asks nothing: it is left out.
    """
    seen, kinds, groups = set(), set(), []
    words = _WORD.findall(text.lower())[: MAX_TERMS * 2]
    for word, following in zip(words, [*words[1:], ""], strict=True):
        if word in STOP_WORDS or word in seen or (word in FRAME_NOUNS and following == "of"):
            continue
        seen.add(word)
        forms = _forms(word)
        if frozenset(forms) not in kinds:  # "summaries" and "summarise" are one word asked twice
            kinds.add(frozenset(forms))
            groups.append(forms)
    return groups[:MAX_TERMS]


@functools.lru_cache(maxsize=4096)
def _forms(word: str) -> tuple[str, ...]:
    import lemminflect  # loads its tables on first use (~0.4 s), not at start-up

    forms = {word}
    if word.isalpha():
        lemmas = {lemma.lower() for found in lemminflect.getAllLemmas(word).values() for lemma in found}
        for base in lemmas | {variant for lemma in lemmas for variant in variants(lemma)}:
            forms.add(base)
            for inflections in lemminflect.getAllInflections(base).values():
                forms.update(form.lower() for form in inflections)
    return (word, *sorted(form for form in forms - {word} if form.isalpha()))


def ranked(memories: QuerySet, query: str, *, tenant_id=None) -> QuerySet:
    """Return ``memories`` sharing a meaningful term with ``query``, best first; then confidence, recency."""
    if not query.strip():
        ordered = memories.annotate(rank=Value(0.0, output_field=FloatField()))
    else:
        groups = query_groups(query)
        if not groups:
            ordered = memories.none().annotate(rank=Value(0.0, output_field=FloatField()))
        elif connection.vendor == "postgresql":
            ordered = _postgres(memories, groups, tenant_id)
        else:
            ordered = _python(memories, groups)
    return ordered.order_by("-rank", "-confidence", "-updated_at", "id")


def idf(documents: int, frequency: int) -> float:
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


class LexemeQuery(SearchQuery):
    """A tsquery of exact lexemes OR-ed together (already normalised: no parsing, no stemming)."""

    def __init__(self, lexemes):
        self.lexemes = sorted(lexemes)
        super().__init__("", search_type="raw")

    def as_sql(self, compiler, connection, **extra):  # type: ignore[override]  # takes no template
        return "%s::tsquery", [_tsquery(self.lexemes)]


def _tsquery(lexemes) -> str:
    return " | ".join(
        "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" for lexeme in sorted(lexemes)
    )


class Matched(Expression):
    """The sum, over groups of lexemes, of each group's value where the search vector holds one of them.

    ``length_norm`` = (a, b, c) multiplies the sum by a / (b + c · the vector's
    length): BM25's normalisation. One node over one column: the same SQL as a
    ``Case``/``When`` per group, which Django copies and resolves node by node
    at every clone of the queryset, several milliseconds a search.
    """

    def __init__(self, document, groups, output_field, length_norm: tuple[float, float, float] | None = None):
        super().__init__(output_field=output_field)
        self.document = document if hasattr(document, "resolve_expression") else F(document)
        self.groups = [(tuple(sorted(lexemes)), value) for lexemes, value in groups]
        self.length_norm = length_norm

    def get_source_expressions(self) -> list:
        return [self.document]

    def set_source_expressions(self, exprs) -> None:
        (self.document,) = exprs

    def as_sql(self, compiler, connection, **extra):
        column, column_params = compiler.compile(self.document)
        cast = "float8" if isinstance(self.output_field, FloatField) else "integer"
        terms, params = [f"0::{cast}"], []
        for lexemes, value in self.groups:
            terms.append(f"CASE WHEN {column} @@ %s::tsquery THEN %s::{cast} ELSE 0 END")
            params += [*column_params, _tsquery(lexemes), value]
        sql = "(" + " + ".join(terms) + ")"
        if self.length_norm:
            sql += f" * (%s::float8 / (%s::float8 + %s::float8 * length({column})))"
            params += [*self.length_norm, *column_params]
        return sql, params


def _postgres(memories: QuerySet, groups: list[tuple[str, ...]], tenant_id) -> QuerySet:
    numbers = [n for n, forms in enumerate(groups) for _ in forms]
    forms = [form for group in groups for form in group]
    # Each lexeme's and the tenant's counts, in one round trip, where the search reads.
    with connections[memories.db].cursor() as cursor:
        cursor.execute(
            "SELECT g.n, l.lexeme, COALESCE(t.documents, 0), COALESCE(c.documents, 0), COALESCE(c.lexemes, 0)"
            " FROM unnest(%s::int[], %s::text[]) AS g(n, form)"
            " CROSS JOIN LATERAL unnest(tsvector_to_array(to_tsvector('english', g.form))) AS l(lexeme)"
            " LEFT JOIN memory_core_searchterm t ON t.tenant_id = %s AND t.lexeme = l.lexeme"
            " LEFT JOIN memory_core_searchcorpus c ON c.tenant_id = %s",
            [numbers, forms, tenant_id, tenant_id],
        )
        rows = cursor.fetchall()
    corpus = rows[0][3:] if rows else (0, 0)
    documents, average = max(corpus[0], 1), max(corpus[1] / corpus[0], 1.0) if corpus[0] else 1.0
    lexemes: dict[int, dict[str, int]] = {}
    for n, lexeme, frequency, _, _ in rows:
        lexemes.setdefault(n, {})[lexeme] = frequency
    weighted = sorted(
        ((min(sum(found.values()), documents), set(found)) for found in lexemes.values()), key=lambda g: g[0]
    )
    if not weighted:
        return memories.none().annotate(rank=Value(0.0, output_field=FloatField()))
    scored = memories.alias(document=F("search_vector"))  # filtered and ranked on, never shipped
    selected: set = set()
    total = 0
    for frequency, found in weighted:  # rarest first, until the candidates would be enough
        if selected and total + frequency > CANDIDATES:
            break
        selected |= found
        total += frequency
    pool = scored.filter(document=LexemeQuery(selected))
    if len(selected) < sum(len(found) for _, found in weighted) and not pool.exists():
        # The filters left none of the rare words' memories: let the common words select too.
        pool = scored.filter(document=LexemeQuery(set().union(*(found for _, found in weighted))))
        total = sum(frequency for frequency, _ in weighted)
    rank = Matched(
        "document",
        [(found, idf(documents, frequency)) for frequency, found in weighted],
        FloatField(),  # float8 throughout: a bare literal is numeric in PostgreSQL, far slower
        length_norm=(K1 + 1, 1 + K1 * (1 - B), K1 * B / average),
    )
    if total > MAX_CANDIDATES:  # only common words: rank an arbitrary capped share of their matches
        pool = scored.filter(pk__in=pool.values("pk")[:MAX_CANDIDATES])
    return pool.annotate(rank=rank)


@functools.lru_cache(maxsize=1)
def _stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")  # the algorithm of PostgreSQL's english configuration


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _stemmer().stemWord(word)


def _python(memories: QuerySet, groups: list[tuple[str, ...]]) -> QuerySet:
    """SQLite: a substring prefilter in SQL, then BM25 over the recallable rows of this search in Python."""
    stems = [{_stem(form) for form in group} for group in groups]
    prefixes = {_prefix(form) for group in groups for form in group}
    statement, summary = KeyTextTransform("statement", "content"), KeyTextTransform("summary", "content")
    match = Q()
    for prefix in prefixes:
        match |= Q(content__statement__icontains=prefix) | Q(content__summary__icontains=prefix)
    rows = memories.filter(match).values_list("pk", statement, summary)
    terms = {
        pk: {_stem(w) for w in _WORD.findall(f"{a or ''} {b or ''}".lower())} - STOP_WORDS
        for pk, a, b in rows
    }
    totals = memories.aggregate(n=Count("pk"), chars=Sum(Length(statement)))
    documents = max(totals["n"] or 0, 1)
    matched = {pk: found for pk, found in terms.items() if any(found & group for group in stems)}
    if not matched:
        return memories.none().annotate(rank=Value(0.0, output_field=FloatField()))
    # Average length in distinct terms, from the average length in characters of every recallable row.
    chars = sum(len(" ".join(found)) for found in matched.values()) or 1
    average = max((totals["chars"] or 0) / documents * sum(len(f) for f in matched.values()) / chars, 1.0)
    weights = [idf(documents, sum(1 for found in terms.values() if found & group)) for group in stems]
    scores = {}
    for pk, found in matched.items():
        score = sum(weight for weight, group in zip(weights, stems, strict=True) if found & group)
        scores[pk] = score * (K1 + 1) / (1 + K1 * (1 - B + B * len(found) / average))
    best = sorted(scores, key=lambda pk: -scores[pk])[:SQLITE_RANKED]
    return memories.filter(pk__in=best).annotate(
        rank=Case(*(When(pk=pk, then=Value(scores[pk])) for pk in best), output_field=FloatField())
    )


def stems_of(forms) -> set[str]:
    """The stems of a group's forms: how the search index holds them."""
    return {_stem(form) for form in forms}


def text_stems(text: str) -> set[str]:
    """The stems of a text's meaningful words (as the SQLite ranking reads a memory)."""
    return {_stem(word) for word in _WORD.findall(text.lower()) if word not in STOP_WORDS}


def visible_match(text: str, groups: list[tuple[str, ...]]) -> float:
    """Share of the query's word groups found (by stem) in ``text``: lexical match on a shown text."""
    if not groups or not text:
        return 0.0
    stems = {_stem(word) for word in _WORD.findall(text.lower())}
    return sum(1 for group in groups if stems & {_stem(form) for form in group}) / len(groups)


def _prefix(form: str) -> str:
    """What every word with this form's stem contains ("happy" → "happ", matching "happiness")."""
    stem, prefix = _stem(form), []
    for a, b in zip(form, stem, strict=False):
        if a != b:
            break
        prefix.append(a)
    return "".join(prefix) if len(prefix) >= 3 else form
