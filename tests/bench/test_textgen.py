"""The text generator is deterministic, valid for the real freezing, and as selective as asked."""

import pytest

from bench.textgen import KINDS, TextGenerator
from proposals.kinds.create import freeze_new_memory as _prepare_create
from proposals.models import Proposal
from registrations.compiled import DEFAULT


def test_same_seed_and_index_give_the_same_memory():
    assert TextGenerator(3).memory_fields(41) == TextGenerator(3).memory_fields(41)
    assert TextGenerator(3).memory_fields(41) != TextGenerator(4).memory_fields(41)


@pytest.mark.parametrize("kind", KINDS)
def test_fields_are_what_freezing_stores_for_the_payload(kind):
    text = TextGenerator(seed=1, vocabulary=300)
    for i in range(40):
        payload = text.memory_payload(i, kind=kind)
        proposal = Proposal()
        _prepare_create(proposal, payload, DEFAULT)  # also validates content and retention
        assert proposal.fields == text.memory_fields(i, kind=kind)


def test_vocabulary_sets_how_selective_a_word_is():
    text = TextGenerator(seed=2, vocabulary=2000)
    statements = [text.memory_fields(i)["content"]["statement"].split() for i in range(3000)]
    for word in text.query_words(5):
        share = sum(word in words for words in statements) / len(statements)
        assert 0 < share < 0.02


def test_reserve_never_hands_out_an_index_twice():
    text = TextGenerator()
    assert list(text.reserve(3)) + list(text.reserve(2)) == [0, 1, 2, 3, 4]
