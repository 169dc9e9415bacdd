"""Meaning is what a question asks about; who it asks about, the person signals weigh.

A speaker's name in each of her turns ("Caroline: …") made every one of them
near, in meaning, to a question that names her, whatever it asked: her
greetings as near as the turn that answers. Since ``2027-03-30.1`` the dense
signal compares the question without the names it writes
(``named_people.without_names``), which ``person``, ``subject`` and the words
weigh; a tenant pinned to an older version compares the whole question, as
before (a type pinned so: ``tests/registrations/test_activation_parameters.py``).
"""

import pytest

from memory_core.embeddings import WordLlamaEmbedder, cosine
from memory_core.named_people import without_names
from memory_core.ranking import DEFAULT_VERSION
from tests.recall.searching import item_of, search

QUESTION = "What pastimes has Caroline taken up lately?"
GREETING = "Hey Caroline, good to see you Caroline!"
TELLING = "I started painting and gardening lately"


@pytest.mark.parametrize(
    ("question", "compared"),
    [
        (QUESTION, "What pastimes has taken up lately?"),
        ("What has Caroline's brother done?", "What has brother done?"),
        ("When did Melanie and Caroline meet on Tuesday?", "When did and meet on Tuesday?"),
        ("Caroline went where?", "Caroline went where?"),  # the first word is capitalised anyway
        ("what did caroline do?", "what did caroline do?"),  # written as no name
        ("What did I tell Andrew in May?", "What did I tell in May?"),
    ],
)
def test_the_question_is_compared_without_the_names_it_writes(question, compared):
    assert without_names(question) == compared


def _cosine(question: str, statement: str) -> float:
    query, turn = WordLlamaEmbedder().embed([question, statement])
    return cosine(query, turn)  # clamped to [0, 1], as the dense signal is


def _dense(body: dict, memory) -> float:
    return item_of(body, memory)["explanation"]["dense"]["value"]


def test_the_telling_turn_is_nearer_than_a_greeting_that_names_her_twice(remember, api):
    greeting, telling = remember(GREETING), remember(TELLING)
    body = search(api, QUESTION)
    assert body["weights_version"] == DEFAULT_VERSION == "2027-04-06.1"
    assert _dense(body, telling) == pytest.approx(_cosine(without_names(QUESTION), TELLING), abs=1e-3)
    assert _dense(body, greeting) == pytest.approx(_cosine(without_names(QUESTION), GREETING), abs=1e-3)
    assert _dense(body, telling) > _dense(body, greeting)


def test_a_tenant_pinned_to_the_version_before_compares_the_whole_question(remember, api, agent, settings):
    greeting, telling = remember(GREETING), remember(TELLING)
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2027-03-23.1"}
    body = search(api, QUESTION)
    assert _dense(body, greeting) == pytest.approx(_cosine(QUESTION, GREETING), abs=1e-3)
    assert _dense(body, greeting) > _dense(body, telling)
