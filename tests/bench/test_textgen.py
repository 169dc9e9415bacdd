"""The text generator is deterministic, valid for the real freezing, and its fast digest is exact."""

import math

import pytest

from bench.seed import fast_digest
from bench.textgen import KINDS, TextGenerator
from core.canonical import digest
from proposals.models import Proposal
from proposals.services.freezing import _prepare_create


def test_same_seed_and_index_give_the_same_memory():
    assert TextGenerator(3).memory_fields(41) == TextGenerator(3).memory_fields(41)
    assert TextGenerator(3).memory_fields(41) != TextGenerator(4).memory_fields(41)


@pytest.mark.parametrize("kind", KINDS)
def test_fields_are_what_freezing_stores_for_the_payload(kind):
    text = TextGenerator(seed=1, vocabulary=300)
    for i in range(40):
        payload = text.memory_payload(i, kind=kind)
        proposal = Proposal()
        _prepare_create(proposal, payload)  # also validates content and retention
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


@pytest.mark.parametrize(
    "value",
    [
        1.0,
        -0.0,
        0.0123,
        1e-5,
        5e-05,
        123456.789,
        1e16,
        1e21,
        2**53 - 1,
        True,
        None,
        "".join(map(chr, range(0x80))) + "é\u2028😀",
        {"b": [1, 2.5, {"z": None}], "a": "x", "é": 1, "\U0001f600": 2, "\ufb01": 3},
        [math.pi, -math.e, 1 / 3],
    ],
)
def test_fast_digest_is_the_rfc8785_digest(value):
    assert fast_digest(value) == digest(value)


def test_fast_digest_matches_on_generated_proposals():
    text = TextGenerator(seed=5)
    for i in range(500):
        fields = text.memory_fields(i)
        assert fast_digest({"fields": fields, "n": i}) == digest({"fields": fields, "n": i})
