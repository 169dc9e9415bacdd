"""WordLlama, the default embedder: meaning from static word vectors, loaded from its own package.

Where the words tie, the turn whose meaning is nearer the question comes
first ("books" and "reading" share no word). It needs no network and no torch,
and from ``2027-02-16.1`` to ``2027-03-30.1`` it was believed half as much as a
sentence transformer; since ``2027-04-06.1``, which compares the question without the
names it writes, as much. A tenant pinned to an older version keeps its dense weight.
"""

import math
import socket

import pytest

from memory_core.embeddings import WordLlamaEmbedder, active_embedder
from memory_core.models import MemoryVector
from memory_core.ranking import DEFAULT_VERSION, WEIGHTS
from tests.recall.searching import item_of, search, served

WORDLLAMA = WordLlamaEmbedder.name
QUESTION = "What books has Alice enjoyed lately?"
OTHER_SUBJECT = {"kind": "user", "id": "pm-alice-2"}  # recency compares within a subject


@pytest.fixture
def turns(remember):
    """Two memories that share one word with the question ("alice"): only meaning tells them apart."""
    reading = remember("Alice just finished rereading an old novel")
    car = remember("Alice had the car towed to the garage", subject=OTHER_SUBJECT)  # newer
    return reading, car


def test_it_loads_from_its_package_with_no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("no network in this test")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    vectors = WordLlamaEmbedder().embed(["Maya finished a novel", "", "  "])
    assert len(vectors[0]) == WordLlamaEmbedder.dimensions == 256
    assert math.sqrt(sum(x * x for x in vectors[0])) == pytest.approx(1.0, abs=1e-5)
    assert not any(vectors[1]) and not any(vectors[2])  # no text, no direction
    assert WordLlamaEmbedder().embed([]) == []


def test_it_is_the_default_and_the_executor_stores_its_vector_for_each_applied_revision(remember):
    assert active_embedder().name == WORDLLAMA
    memory = remember("Alice just finished rereading an old novel")
    stored = MemoryVector.objects.get(memory=memory)
    assert (stored.memory_revision, stored.embedder) == (1, WORDLLAMA)


def test_meaning_orders_what_the_words_tie_on(turns):
    reading, car = turns
    vectors = WordLlamaEmbedder().embed([QUESTION, reading.content["statement"], car.content["statement"]])
    nearer = sum(a * b for a, b in zip(vectors[0], vectors[1], strict=True))
    farther = sum(a * b for a, b in zip(vectors[0], vectors[2], strict=True))
    assert nearer > farther


def test_over_the_api_the_nearer_meaning_comes_first_at_the_lexical_weight(settings, agent, api, turns):
    reading, car = turns
    body = search(api, QUESTION)
    assert body["weights_version"] == DEFAULT_VERSION == "2027-04-06.1"
    assert served(body) == [str(reading.id), str(car.id)]
    dense = item_of(body, reading)["explanation"]["dense"]
    assert dense["embedder"] == WORDLLAMA
    assert dense["weight"] == WEIGHTS[DEFAULT_VERSION].dense_for(WORDLLAMA) == 1.0
    assert dense["contribution"] == pytest.approx(dense["value"], abs=1e-3)
    assert dense["value"] > item_of(body, car)["explanation"]["dense"]["value"]

    settings.CUSTODIAN_EMBEDDER = "none"  # without meaning, the newer of the tied memories is first
    assert served(search(api, QUESTION)) == [str(car.id), str(reading.id)]


@pytest.mark.parametrize(("version", "weight"), [("2027-02-09.1", 1.0), ("2027-03-30.1", 0.5)])
def test_a_pinned_tenant_keeps_the_dense_weight_of_its_version(settings, agent, api, turns, version, weight):
    reading, _ = turns
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: version}
    pinned = search(api, QUESTION)
    assert pinned["weights_version"] == version
    assert item_of(pinned, reading)["explanation"]["dense"]["weight"] == weight


@pytest.mark.parametrize("embedder", ["hashing-256", "all-minilm-l6-v2"])
def test_other_embedders_keep_meaning_at_the_lexical_weight(embedder):
    assert WEIGHTS[DEFAULT_VERSION].dense_for(embedder) == WEIGHTS[DEFAULT_VERSION].lexical == 1.0
