"""Recall finds a memory by the variants a person types: British or American spelling, noun or verb."""

import pytest

from memory_core.morphology import variants
from memory_core.search import query_groups
from tests.factories import apply_released, create_payload, make_evidence, submit, user_preference

pytestmark = pytest.mark.django_db


def _remember(agent, statement: str) -> None:
    memory = user_preference()
    memory["content"] = {**memory["content"], "statement": statement}
    apply_released(submit(agent.agent, create_payload(memory, [make_evidence(agent.agent)])))


def _found(agent, query: str) -> list[str]:
    response = agent.client.post("/api/v1/recall/search", {"query": query}, format="json")
    assert response.status_code == 200, response.content
    return [item["memory"]["content"]["statement"] for item in response.json()["results"]]


@pytest.mark.parametrize(
    ("query", "statement"),
    [
        ("summarise", "Alice prefers weekly summaries"),  # British verb, the noun it comes from
        ("summary", "Alice asked me to summarize the call"),
        ("colour", "Bob's favorite color is teal"),
        ("theatre", "Carol booked tickets at the theater downtown"),
        ("analyse", "Dan will analyze the survey results"),
    ],
)
def test_a_variant_finds_the_memory_on_this_backend(agent, query, statement):
    _remember(agent, statement)
    _remember(agent, "Zed drinks tea every morning")  # shares no word with any query
    assert _found(agent, query) == [statement]


def test_a_variant_is_a_known_word_never_an_invented_one():
    assert variants("summarise") == {"summarize", "summary"}
    assert variants("colour") >= {"color"}
    assert variants("rise") == frozenset()  # no "rize"
    assert variants("shower") == frozenset()  # no "show": derivations are suffix rules on known words
    assert variants("station") == frozenset()  # "st" + "ate" is too short a stem


def test_two_words_of_one_group_count_once():
    groups = query_groups("weekly summaries, summarise them")
    assert [group[0] for group in groups] == ["weekly", "summaries"]


def test_the_noun_framing_a_question_asks_nothing(agent):
    _remember(agent, "Gabriel went to a pottery workshop with the kids")
    _remember(agent, "That is so kind of you to help")
    assert _found(agent, "What kind of workshop did Gabriel attend?") == [
        "Gabriel went to a pottery workshop with the kids"
    ]
    assert _found(agent, "Who was kind?") == ["That is so kind of you to help"]  # not a frame here
    framed = query_groups("Which types of outings, what sort of day?")
    assert [group[0] for group in framed] == ["outings", "day"]
