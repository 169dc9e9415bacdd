"""A question that asks when is answered by the turn that says when.

"When did Caroline go to the support group?" matches every turn about the
support group: the one that told it ("I went to a support group yesterday,
it was so powerful"), and the later ones that mention it in passing ("the
group has really helped"). The telling turn is the one that says when: it
holds a word of time (yesterday, ago, last, a weekday, a month, …), which,
with the session's date, answers the question. So for a question that asks
when, each candidate served ``raw`` that holds such a word takes 1, weighted
``when``, and so does a turn after a hit that the episode signal reaches ("Did
you go to the group?" "I did, on Tuesday night!"), whose words the first stage
reads anyway to tell whether it asks.

A word of time in a turn is its content: only a candidate the read policy
serves ``raw`` takes a value, so a masked or fenced turn never moves. On
PostgreSQL it is read in the same query as the candidates' rank; on SQLite,
from their text, which that query reads too.

The same word marks the turns that tell happenings, which is what a question
about someone's doings across the conversation asks for: a list ("What
hobbies has Caroline picked up?", "Where has she travelled?", "How many
times has she been to the beach?") or a disposition ("Would she enjoy a
hike?"). Its answers are scattered over sessions and often share no word
with it, while the turns that do share one are mostly small talk ("Any plans
for the weekend?"). So for such a question, the turns that say when take 1
too, weighted ``happening``.

A turn that asks tells nothing, whatever words of time it holds: "Any plans
for the weekend?" and "Hey, happy Wednesday! What's new?" share the
question's person and a word of time with every telling turn, and come up in
every session. So a turn whose last sentence asks takes neither value
(``unless_asking``; weights before ``2027-03-02.1`` let it).

Not every telling turn says when ("We flew to Chicago, a long overdue
getaway"), but it narrates: it holds a verb in the past tense ("flew",
"started", "saw"), which small talk ("Any plans?", "It's hard with everything
going on") mostly does not. So for a question about someone's doings, a turn
whose statement does not ask and holds a past-tense verb other than an
auxiliary ("was", "had", "could") takes 1 more, weighted ``narrating``
(``lemminflect``'s lexicon tells the tenses apart; the candidate query reads
their statements, only for such a question).
"""

import functools
import re
import uuid

from django.db.models import Case, IntegerField, Q, QuerySet, Value, When

from memory_core.search import Matched, stems_of, text_stems

# "When did …", "what day was …", "how long ago did …": the first words of a question about time.
_ASKS_WHEN = re.compile(r"^\W*(when|(what|which) (day|date|time|month|year)|how long ago)\b")
# "What hobbies has …", "which new pastimes has …", "what kinds of outings has …" (a plural,
# lower case: "What does Tomas do" names one person), "where has …", "how many times …",
# "would …", "is … the sort of person …": a list of happenings, or a disposition they show.
_ASKS_ABOUT_HAPPENINGS = re.compile(
    r"^\W*(?:(?:what|which)\s+(?:\S+\s+){0,2}?(?-i:[a-z])\S*[^su\W]s\s+(?:has|have|had|does|do|did)\b"
    r"|where\s+(?:has|have)\b|how\s+many\s+times\b|would\b"
    r"|(?:is|are)\s+\S+\s+(?:the\s+(?:sort|kind|type)\b|likely\b))",
    re.IGNORECASE,
)
# Words that place a happening in time. Not "may" or "march" (verbs far more often), nor "day",
# "week" or "year" alone ("five days there" is a duration): "last week" and "a week ago" hold
# "last" and "ago".
TIME_WORDS = (
    "yesterday",
    "today",
    "tonight",
    "ago",
    "last",
    "earlier",
    "weekend",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
TIME_STEMS = frozenset(stems_of(TIME_WORDS))
# A statement whose last sentence asks: "…?" then nothing but spaces, closing marks or emoji (the
# same pattern in Python and in PostgreSQL's regular expressions).
ASKING = r"\?[^\w.!?]*$"
_ASKING = re.compile(ASKING)


def asks_when(query: str) -> bool:
    return bool(_ASKS_WHEN.match(query.lower()))


def asks_about_happenings(query: str) -> bool:
    """A question about someone's doings across the conversation (not one that asks when)."""
    return bool(_ASKS_ABOUT_HAPPENINGS.match(query)) and not asks_when(query)


def asks(statement: str | None) -> bool:
    return isinstance(statement, str) and bool(_ASKING.search(statement))


def says_when(statement: str | None, summary: str | None = None, *, unless_asking: bool = True) -> bool:
    """Does a turn tell when something happened: a word of time (in a statement that does not ask)."""
    if unless_asking and asks(statement):
        return False
    return bool(TIME_STEMS & text_stems(f"{statement or ''} {summary or ''}"))


def with_time_words(candidates: QuerySet, *, unless_asking: bool = True) -> QuerySet:
    """PostgreSQL: annotate ``says_when``, 1 where the candidate's search vector holds a word of time
    (and its statement does not ask)."""
    holds = Matched("document", [(TIME_STEMS, 1)], IntegerField())
    if not unless_asking:
        return candidates.annotate(says_when=holds)
    asking = When(Q(content__statement__regex=ASKING), then=Value(0))
    return candidates.annotate(says_when=Case(asking, default=holds, output_field=IntegerField()))


# Past forms that tell no happening by themselves ("it was", "I could never", "we had fun").
PAST_AUXILIARIES = frozenset(
    ["was", "were", "had", "did", "could", "would", "should", "might", "must", "ought", "used"]
)
# Words after which a past form describes a state ("so excited", "I'm tired", "feeling stuck").
STATE_BEFORE = frozenset(
    {"m", "am", "is", "are", "be", "been", "being", "was", "were"}
    | {"so", "very", "really", "too", "feel", "feeling"}
)
_WORDS = re.compile(r"[a-z]+")


def narrates(statement: str | None) -> bool:
    """Does a turn that does not ask hold a verb in the past tense (not an auxiliary, not a state)?"""
    if not statement or asks(statement):
        return False
    words = _WORDS.findall(statement.lower())
    return any(
        _past_tense(word) and (n == 0 or words[n - 1] not in STATE_BEFORE) for n, word in enumerate(words)
    )


@functools.lru_cache(maxsize=16384)
def _past_tense(word: str) -> bool:
    import lemminflect  # loads its tables on first use, as ``search._forms`` does

    if word in PAST_AUXILIARIES:
        return False
    lemmas = lemminflect.getAllLemmas(word).get("VERB", ())
    return any(
        word != lemma and word in lemminflect.getAllInflections(lemma, upos="VERB").get("VBD", ())
        for lemma in lemmas
    )


def telling_in_text(texts: dict[uuid.UUID, tuple], *, unless_asking: bool = True) -> dict[uuid.UUID, tuple]:
    """The memories whose (statement, summary) say when or narrate, each with (says when, narrates)."""
    told = {
        pk: (says_when(statement, summary, unless_asking=unless_asking), narrates(statement))
        for pk, (statement, summary) in texts.items()
    }
    return {pk: values for pk, values in told.items() if any(values)}
