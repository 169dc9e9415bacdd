"""Tiered entity resolution: only exact matches resolve on their own; guesses and people go to review."""

import pytest

from memory_core.entity_resolution import (
    MAX_KNOWN,
    KnownEntity,
    merge_needs_review,
    normalise,
    resolve,
)

KNOWN = [
    KnownEntity("org-1", "organisation", ("Goldman Sachs Group Inc.", "Goldman")),
    KnownEntity("org-2", "organisation", ("Capital Group",)),
    KnownEntity("fac-1", "factor", ("momentum_12_1", "12-1 momentum")),
    KnownEntity("per-1", "person", ("Alice Zhang",)),
]


def test_normalisation_folds_case_accents_punctuation_and_legal_suffix():
    assert normalise("  Société   Générale S.A. ") == normalise("societe generale")
    assert normalise("Goldman Sachs Group, Inc.") == "goldman sachs group"


def test_exact_after_normalisation_resolves_without_review():
    [match] = resolve("GOLDMAN SACHS group", "organisation", KNOWN)
    assert (match.entity_id, match.tier, match.needs_review) == ("org-1", "exact", False)


@pytest.mark.parametrize(
    ("mention", "tier"),
    [("GSG", "initialism"), ("Goldmen Sachs Group", "typo"), ("Sachs Group", "containment")],
)
def test_guesses_are_only_proposed_for_review(mention, tier):
    [match] = resolve(mention, "organisation", KNOWN)
    assert (match.entity_id, match.tier, match.needs_review) == ("org-1", tier, True)


def test_kind_is_never_crossed():
    assert resolve("Alice Zhang", "organisation", KNOWN) == []


def test_short_names_and_word_fragments_do_not_match():
    assert resolve("Capita", "organisation", KNOWN) == []  # 6 chars but "capital group" is too far
    assert resolve("ai", "organisation", KNOWN) == []
    assert resolve("...", "organisation", KNOWN) == []


def test_person_typo_is_review_and_person_merge_always_review():
    [match] = resolve("Alice Zhong", "person", KNOWN)
    assert match.needs_review
    assert merge_needs_review("person", "exact")
    assert not merge_needs_review("factor", "exact")
    assert merge_needs_review("factor", "containment")


def test_resolution_is_bounded():
    with pytest.raises(ValueError):
        resolve("x", "factor", [KNOWN[2]] * (MAX_KNOWN + 1))
