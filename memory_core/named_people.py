"""A person a question names bounds what can answer it.

"What kinds of outings has Caroline taken the children on?" shares
"children" with a turn of someone else's chat ("we raised money for the
children's hospital"), and that rare word outweighs "Caroline", which comes
up in every one of her turns. Coverage (``memory_core.coverage``) weighs the
name as one word among the others. Yet an answer about Caroline is said where
she is: in a session she talks in or is talked about. So each raw candidate
takes the share of the names the question writes that its episode (outside
a conversation, its evidence, or the memory itself) holds, weighted
``person``: 1 where Caroline is. An episode holds a name when one of its raw
candidates says it or has a subject id that names it (``c1-caroline``); a
turn next to a hit takes the hit's value, since they share the episode.

A name is a word the question writes with a capital, other than its first
word, "I", and words of time ("Tuesday", "May"). A question that names
nobody gives nothing. Only candidates served ``raw`` hold names, so a masked
turn never lends its episode one.
"""

import re
import uuid

from memory_core.coverage import WordGroups
from memory_core.search import stems_of
from memory_core.when import TIME_WORDS

_WORDS = re.compile(r"[A-Za-z][A-Za-z']*")
_NOT_NAMES = frozenset({"i", *TIME_WORDS, "may", "march"})
Held = tuple[uuid.UUID, uuid.UUID, int]  # a raw candidate: (id, episode, word groups held)


def names(query: str) -> list[str]:
    """The words ``query`` writes as names: capitalised, lower case after, not its first word."""
    words = [word.removesuffix("'s").removesuffix("'") for word in _WORDS.findall(query)]
    return [
        word.lower()
        for word in words[1:]
        if word[:1].isupper() and word[1:].islower() and word.lower() not in _NOT_NAMES
    ]


def without_names(query: str) -> str:
    """``query`` without the names it writes: "What has Caroline's brother done?" → "What has
    brother done?" (the meaning the dense signal compares, since the person signals weigh the names)."""
    named = set(names(query))
    if not named:
        return query
    kept, start = [], 0
    for at, match in enumerate(_WORDS.finditer(query)):
        word = match.group().removesuffix("'s").removesuffix("'")
        if at and word.lower() in named and word[:1].isupper():
            kept.append(query[start : match.start()])
            start = match.end()
    kept.append(query[start:])
    return " ".join("".join(kept).split())


def name_mask(query: str, groups: WordGroups) -> int:
    """A bit per word group of the question that is a name it writes (0: it names nobody)."""
    named = stems_of(names(query))
    return sum(1 << n for n, group in enumerate(groups.stems) if group & named)


def with_named_people(candidates: list[Held], mask: int) -> dict[uuid.UUID, float]:
    """Each raw candidate's value: the share of ``mask``'s names its episode holds (none: left out)."""
    episodes: dict[uuid.UUID, int] = {}
    for _, episode, held in candidates:
        episodes[episode] = episodes.get(episode, 0) | held
    named = mask.bit_count()
    shares = {episode: (held & mask).bit_count() / named for episode, held in episodes.items()}
    return {pk: shares[episode] for pk, episode, _ in candidates if shares[episode]}
