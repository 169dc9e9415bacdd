"""A person a question names bounds what can answer it: the turns of the sessions where that person
is come before a better word match in someone else's chat.

"Where did Caroline take the children?" shares "took" and "children" with
Joanna's turn in another chat, and only "Caroline" with the session where
Caroline tells it. Each raw candidate takes the share of the names the
question writes that its episode holds (a raw turn says the name, or its
subject id names it), weighted ``person``.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_core.named_people import names
from memory_core.ranking import DEFAULT_VERSION, WEIGHTS
from tests.factories import make_evidence
from tests.recall.searching import item_of, search, served

PERSON = WEIGHTS[DEFAULT_VERSION].person
QUESTION = "Where did Caroline take the children?"
CAROLINE = {"kind": "user", "id": "c1-caroline"}


@pytest.fixture(autouse=True)
def without_meaning(settings):
    """Words and the signal alone: meaning would also lift Joanna's museum turn, which says what
    the question asks of someone else (``tests/recall/test_dense_topic.py``)."""
    settings.CUSTODIAN_EMBEDDER = "none"


@pytest.fixture
def session(agent, remember):
    """A new conversation session; what it returns files a turn in it."""

    def start():
        evidence = make_evidence(agent.agent, kind="conversation")

        def turn(statement, subject=None, **fields):
            subject = subject or {"kind": "user", "id": "someone"}
            return remember(statement, type="episodic_event", evidence=evidence, subject=subject, **fields)

        return turn

    return start


@pytest.fixture
def elsewhere(session):
    """Joanna's turn in another chat: the better word match."""
    return session()("Joanna: I took the children to the children's museum, the children loved it")


def test_a_turn_of_the_named_persons_session_comes_before_a_better_match_elsewhere(session, elsewhere, api):
    hers = session()
    told = hers("Caroline: We finally went to the aquarium, the little ones were thrilled")
    body = search(api, QUESTION)
    assert served(body).index(str(told.id)) < served(body).index(str(elsewhere.id))
    signal = item_of(body, told)["explanation"]["person"]
    assert signal == {"value": 1.0, "weight": PERSON, "contribution": PERSON} and PERSON > 0
    assert item_of(body, elsewhere)["explanation"]["person"]["value"] == 0.0
    explanation = item_of(body, told)["explanation"]
    assert item_of(body, told)["score"] == pytest.approx(
        sum(s["contribution"] for s in explanation.values()), abs=1e-3
    )


def test_the_previous_weights_version_ranks_the_better_match_first(session, elsewhere, api, agent, settings):
    told = session()("Caroline: We finally went to the aquarium, the little ones were thrilled")
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2027-03-16.1"}
    body = search(api, QUESTION)
    assert served(body).index(str(elsewhere.id)) < served(body).index(str(told.id))
    assert item_of(body, told)["explanation"]["person"] == {"value": 0.0, "weight": 0.0, "contribution": 0.0}


def test_every_turn_of_the_session_takes_it_and_a_subject_id_names_her_too(session, elsewhere, api):
    hers = session()
    filed = hers("We finally went to the aquarium with the children", CAROLINE)  # her name is nowhere
    reply = hers("Did the children like it?")
    body = search(api, QUESTION)
    assert item_of(body, filed)["explanation"]["person"]["value"] == 1.0
    assert item_of(body, reply)["explanation"]["person"]["value"] == 1.0
    assert served(body).index(str(reply.id)) < served(body).index(str(elsewhere.id))


def test_a_turn_next_to_a_hit_of_her_session_takes_the_hits_value(session, elsewhere, api):
    hers = session()
    hers("Caroline: We took the children to the aquarium on Sunday")
    reply = hers("So fun, the sharks must have been a hit!")  # no word of the question, nobody named
    body = search(api, QUESTION)
    explanation = item_of(body, reply)["explanation"]
    assert explanation["lexical"]["value"] == 0.0 and explanation["episode"]["value"] > 0
    assert explanation["person"]["value"] == 1.0


def test_a_session_holding_one_of_two_names_takes_half(session, elsewhere, api):
    told = session()("Caroline: We finally went to the aquarium with the children")
    body = search(api, "Where did Caroline and Priya take the children?")
    assert item_of(body, told)["explanation"]["person"]["value"] == 0.5


def test_a_masked_turn_lends_its_session_no_name(session, elsewhere, api):
    hers = session()
    masked = hers("Caroline: The aquarium was lovely", sensitivity="confidential")
    other = hers("The children could not stop talking about the sharks")
    body = search(api, QUESTION)
    assert item_of(body, masked)["return_mode"] == "masked"
    assert item_of(body, masked)["explanation"]["person"]["value"] == 0.0
    assert item_of(body, other)["explanation"]["person"]["value"] == 0.0


def test_a_question_that_names_nobody_gives_nothing(session, elsewhere, api):
    session()("Caroline: We finally went to the aquarium with the children")
    body = search(api, "where did they take the children?")
    assert {item["explanation"]["person"]["value"] for item in body["results"]} == {0.0}


def test_the_signal_costs_no_query(session, elsewhere, api, agent, settings):
    session()("Caroline: We finally went to the aquarium with the children")
    with CaptureQueriesContext(connection) as now:
        search(api, QUESTION)
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2027-03-16.1"}
    with CaptureQueriesContext(connection) as before:
        search(api, QUESTION)
    assert len(now) == len(before)  # the words come with the rank (PostgreSQL) or the text (SQLite)


@pytest.mark.parametrize(
    ("question", "written"),
    [
        ("Where did Caroline take the children?", ["caroline"]),
        ("What does Melanie's brother do?", ["melanie"]),
        ("Caroline went where?", []),  # the first word is capitalised anyway
        ("What did I tell Andrew on Tuesday in May?", ["andrew"]),  # not "I" nor words of time
        ("Did Caroline go to the LGBTQ support group?", ["caroline"]),  # an acronym names nobody
        ("Would Caroline read Dr Seuss?", ["caroline", "dr", "seuss"]),
        ("what did they do", []),
    ],
)
def test_names_are_the_capitalised_words_after_the_first(question, written):
    assert names(question) == written
