"""Recall's activation signal reads its decay and importance from the tenant's active registration."""

import copy
import math

import pytest
from django.utils import timezone

from memory_core.activation import base_level
from memory_core.embeddings import WordLlamaEmbedder, active_embedder, cosine
from memory_core.models import AccessEvent
from memory_core.named_people import without_names
from memory_core.ranking import DEFAULT_VERSION, WEIGHTS
from registrations.document import DEFAULT_DOCUMENT
from tests.factories import apply_released, approve
from tests.registrations.test_publish import _requested


def _activation_of(api, memory) -> dict:
    assert api.get(f"/api/v1/memories/{memory.id}/").status_code == 200
    body = api.post("/api/v1/recall/search", {"query": "weekly summaries"}, format="json").json()
    (item,) = [item for item in body["results"] if item["memory"]["memory_id"] == str(memory.id)]
    return item["explanation"]["activation"]


def test_a_published_decay_and_importance_change_the_activation(agent, api, remember, operator, publisher):
    memory = remember("Alice prefers weekly summaries")
    default = _activation_of(api, memory)
    assert default["base_level"] == pytest.approx(base_level([(timezone.now().date(), 1)]), abs=1e-3)

    document = copy.deepcopy(DEFAULT_DOCUMENT)
    document["types"]["preference"]["activation"].update(decay=1.0, importance=0.5)
    _, proposal = _requested(agent, operator, document)
    approve(publisher, proposal)
    apply_released(proposal)

    published = _activation_of(api, memory)  # two reads today now
    expected = base_level([(timezone.now().date(), 2)], decay=1.0) + 0.5
    assert published["base_level"] == pytest.approx(expected, abs=1e-3)
    assert published["value"] > default["value"]
    assert math.isfinite(published["base_level"])


def test_a_type_ranks_with_the_weights_version_its_registration_names(
    agent, api, remember, operator, publisher
):
    """A type's registered ``ranking_weights`` replace the tenant default for its items only; the
    response and the access event name every version the served items ranked with."""
    fact = remember("Alice holds weekly summaries dear", type="semantic_fact")
    preference = remember("Alice prefers weekly summaries")
    document = copy.deepcopy(DEFAULT_DOCUMENT)
    document["types"]["preference"]["ranking_weights"] = "2026-12-01.1"  # the version without dense
    _, proposal = _requested(agent, operator, document)
    approve(publisher, proposal)
    apply_released(proposal)

    body = api.post("/api/v1/recall/search", {"query": "weekly summaries"}, format="json").json()
    weights = {
        item["memory"]["memory_id"]: item["explanation"]["dense"]["weight"] for item in body["results"]
    }
    embedder = active_embedder().name
    assert weights == {
        str(preference.id): WEIGHTS["2026-12-01.1"].dense_for(embedder),
        str(fact.id): WEIGHTS[DEFAULT_VERSION].dense_for(embedder),
    }
    assert weights[str(preference.id)] != weights[str(fact.id)]
    assert body["weights_version"] == f"2026-12-01.1+{DEFAULT_VERSION}"
    assert AccessEvent.objects.get(pk=body["recall_id"]).ranking_version == body["weights_version"]

    only = api.post(
        "/api/v1/recall/search",
        {"query": "weekly summaries", "filters": {"types": ["preference"]}},
        format="json",
    ).json()
    assert only["weights_version"] == "2026-12-01.1"


def test_a_type_pinned_to_an_older_version_compares_its_own_text_of_the_question(
    agent, api, remember, operator, publisher
):
    """``2027-03-30.1`` compares the question without the names it writes; a type pinned to the
    version before compares the whole question, in the same search."""
    question, greeting_text, telling_text = (
        "What pastimes has Caroline taken up lately?",
        "Hey Caroline, good to see you Caroline!",
        "I started painting and gardening lately",
    )
    greeting = remember(greeting_text)  # a preference
    telling = remember(telling_text, type="semantic_fact")
    document = copy.deepcopy(DEFAULT_DOCUMENT)
    document["types"]["preference"]["ranking_weights"] = "2027-03-23.1"
    _, proposal = _requested(agent, operator, document)
    approve(publisher, proposal)
    apply_released(proposal)

    body = api.post("/api/v1/recall/search", {"query": question}, format="json").json()
    assert body["weights_version"] == f"2027-03-23.1+{DEFAULT_VERSION}"
    dense = {item["memory"]["memory_id"]: item["explanation"]["dense"]["value"] for item in body["results"]}
    embedder = WordLlamaEmbedder()

    def near(text: str, statement: str) -> float:
        return round(max(cosine(*embedder.embed([text, statement])), 0.0), 4)

    assert dense[str(greeting.id)] == pytest.approx(near(question, greeting_text), abs=1e-3)
    assert dense[str(telling.id)] == pytest.approx(near(without_names(question), telling_text), abs=1e-3)
