"""Word variants a person types for the same word: British and American spellings, and derivations.

Inflection is ``lemminflect``'s job (``memory_core.search._forms``): "won" → "win". These
are the variants it does not know are one word: "summarise" and "summarize", "colour" and
"color", "summaries" and "summarise" (the noun and the verb made from it), "relaxation" and
"relax". Each rule proposes candidates by spelling; a candidate is kept only if it is a word
``lemminflect``'s lexicon knows, with the part of speech the derivation produces, so a rule
never invents a form ("rise" gives no "rize") and "shower" never becomes "show".
"""

import functools

# British ↔ American endings of a lemma, tried in both directions.
SPELLINGS = (
    ("ise", "ize"),
    ("isation", "ization"),
    ("yse", "yze"),
    ("our", "or"),
    ("ourite", "orite"),
    ("ourhood", "orhood"),
    ("ourful", "orful"),
    ("ourable", "orable"),
    ("tre", "ter"),
    ("ogue", "og"),
    ("ence", "ense"),
    ("mme", "m"),
)
# Whole words that differ by more than an ending.
SPELLING_PAIRS = (
    ("mum", "mom"),
    ("grey", "gray"),
    ("jewellery", "jewelry"),
    ("pyjamas", "pajamas"),
    ("aluminium", "aluminum"),
    ("mould", "mold"),
    ("moustache", "mustache"),
    ("cosy", "cozy"),
    ("sceptical", "skeptical"),
    ("plough", "plow"),
)
_PAIRED = {a: b for a, b in SPELLING_PAIRS} | {b: a for a, b in SPELLING_PAIRS}
# Derivations: (suffix of the derived word, replacement giving its base, the base's part of
# speech, the derived word's). "summary" ↔ "summarize", "relaxation" ↔ "relax".
DERIVATIONS = (
    ("ize", "y", "NOUN", "VERB"),
    ("ise", "y", "NOUN", "VERB"),
    ("ation", "", "VERB", "NOUN"),
    ("ation", "e", "VERB", "NOUN"),
    ("ation", "ate", "VERB", "NOUN"),
    ("ment", "", "VERB", "NOUN"),
)
MIN_STEM = 3  # what is left once the suffix is cut: "st" of "station" makes no "state"


@functools.lru_cache(maxsize=8192)
def variants(lemma: str) -> frozenset[str]:
    """Return other known words that spell or derive ``lemma`` (never ``lemma`` itself)."""
    found = set(_spellings(lemma))
    for word in (lemma, *found):
        found |= _derivations(word)
    found |= {other for word in list(found) for other in _spellings(word)}
    return frozenset(found - {lemma})


def _spellings(word: str) -> set[str]:
    candidates = {_PAIRED[word]} if word in _PAIRED else set()
    for british, american in SPELLINGS:
        for ending, other in ((british, american), (american, british)):
            if word.endswith(ending) and len(word) > len(ending) + 1:
                candidates.add(word[: -len(ending)] + other)
    return {candidate for candidate in candidates - {word} if _parts_of_speech(candidate)}


def _derivations(word: str) -> set[str]:
    found = set()
    pos = _parts_of_speech(word)
    for suffix, replacement, base_pos, derived_pos in DERIVATIONS:
        stem = word[: -len(suffix)]  # the derived word's stem: "relax" of "relaxation"
        if word.endswith(suffix) and len(stem) >= MIN_STEM and derived_pos in pos:
            found |= {stem + replacement} if base_pos in _parts_of_speech(stem + replacement) else set()
        stem = word[: len(word) - len(replacement)]  # the base's stem: "summar" of "summary"
        if word.endswith(replacement) and len(stem) >= MIN_STEM and base_pos in pos:
            found |= {stem + suffix} if derived_pos in _parts_of_speech(stem + suffix) else set()
    return found


@functools.lru_cache(maxsize=65536)
def _parts_of_speech(word: str) -> frozenset[str]:
    import lemminflect

    return frozenset(lemminflect.getAllLemmas(word))
