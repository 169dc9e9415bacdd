"""Tiered entity resolution: how sure are we that a mention names a known entity?

Pure and bounded (no database): callers pass the tenant's known entities,
already narrowed to a few hundred by kind. The tiers:

- ``exact``: equal after normalisation (case, accents, punctuation,
  whitespace, a legal suffix) to a name or alias → the caller may resolve it
  automatically;
- ``initialism``, ``typo`` (bounded edit distance) and ``containment`` →
  only ever a *proposed* merge for review;
- any match on a ``person`` below ``exact`` is review, and so is a merge of
  two people at any tier (``merge_needs_review``).

Nothing here writes. The entity proposals (create/merge/unmerge, executed
as reversible redirects) and Bounded Dreaming's planner build on it.
"""

import re
import unicodedata
from dataclasses import dataclass

KINDS = ("person", "organisation", "factor", "instrument", "project")
MAX_KNOWN = 500  # entities compared per mention; callers narrow first
MAX_EDITS = 2  # typo tier: at most this many edits, and only on names of 6+ characters
_LEGAL_SUFFIX = re.compile(r"\b(inc|ltd|llc|plc|gmbh|co|corp|corporation|limited|sa|ag)\.?$")
_NON_WORD = re.compile(r"[^\w]+")


@dataclass(frozen=True)
class KnownEntity:
    id: str
    kind: str
    names: tuple[str, ...]  # canonical name first, then aliases


@dataclass(frozen=True)
class Match:
    entity_id: str
    tier: str  # exact | initialism | typo | containment
    needs_review: bool


def normalise(name: str) -> str:
    """Fold case, accents, punctuation and whitespace; drop one trailing legal suffix."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    words = _NON_WORD.sub(" ", folded.replace(".", "")).split()  # "S.A." is "sa", not "s a"
    text = " ".join(words)
    stripped = _LEGAL_SUFFIX.sub("", text).strip()
    return stripped or text


def resolve(mention: str, kind: str, known: list[KnownEntity]) -> list[Match]:
    """Every known entity of ``kind`` the mention may name, best tier first (at most one per entity)."""
    if len(known) > MAX_KNOWN:
        raise ValueError(f"resolve compares at most {MAX_KNOWN} entities; narrow the candidates first")
    wanted = normalise(mention)
    if not wanted:
        return []
    matches = []
    for entity in known:
        if entity.kind != kind:
            continue
        tier = _best_tier(wanted, [normalise(name) for name in entity.names])
        if tier:
            # Below exact is only ever a proposal for review; a person is never auto-resolved on a guess.
            matches.append(Match(entity.id, tier, needs_review=tier != "exact"))
    order = {"exact": 0, "initialism": 1, "typo": 2, "containment": 3}
    return sorted(matches, key=lambda match: (order[match.tier], match.entity_id))


def merge_needs_review(kind: str, tier: str) -> bool:
    """Merging people always goes to a person; other kinds only below an exact match."""
    return kind == "person" or tier != "exact"


def _best_tier(wanted: str, names: list[str]) -> str | None:
    if wanted in names:
        return "exact"
    if any(_initialism(wanted, name) or _initialism(name, wanted) for name in names):
        return "initialism"
    if any(_within_edits(wanted, name) for name in names):
        return "typo"
    if any(_contains(wanted, name) for name in names):
        return "containment"
    return None


def _initialism(short: str, long: str) -> bool:
    words = long.split()
    return len(words) >= 2 and short.replace(" ", "") == "".join(word[0] for word in words)


def _contains(a: str, b: str) -> bool:
    # Whole words only, so "ai" is not inside "capital".
    a_words, b_words = a.split(), b.split()
    shorter, longer = sorted((a_words, b_words), key=len)
    n = len(shorter)
    return 0 < n < len(longer) and any(longer[i : i + n] == shorter for i in range(len(longer) - n + 1))


def _within_edits(a: str, b: str) -> bool:
    if min(len(a), len(b)) < 6 or abs(len(a) - len(b)) > MAX_EDITS:
        return False
    return _edit_distance(a, b, MAX_EDITS) <= MAX_EDITS


def _edit_distance(a: str, b: str, bound: int) -> int:
    """Levenshtein distance, giving up (bound + 1) once every cell of a row exceeds ``bound``."""
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        if min(current) > bound:
            return bound + 1
        previous = current
    return previous[-1]
