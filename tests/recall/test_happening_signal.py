"""A question about someone's doings: the turns that told them come before the small talk.

"What hobbies has Caroline picked up?" shares "hobby" with "I need a new
hobby" and no word with "I started guitar lessons last weekend", the turn it
asks for. A turn that tells a happening says when it was, so for a question
about someone's doings (a list of them, or a disposition they show) each
candidate served ``raw`` that holds a word of time takes the ``happening``
signal. A question that asks when keeps its own ``when`` signal instead. A
telling turn need not say when, but it narrates: a candidate whose statement
holds a verb in the past tense takes the ``narrating`` signal too. A turn
that asks takes neither.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_core.ranking import DEFAULT_VERSION, WEIGHTS
from memory_core.when import asks_about_happenings, narrates
from tests.recall.searching import item_of, search, served

HAPPENING = WEIGHTS[DEFAULT_VERSION].happening
QUESTION = "Which pastimes has Caroline taken up lately?"
ZERO = {"value": 0.0, "weight": HAPPENING, "contribution": 0.0}


@pytest.fixture(autouse=True)
def without_meaning(settings):
    """Words and the signal alone: no dense similarity to reorder the turns."""
    settings.CUSTODIAN_EMBEDDER = "none"


@pytest.mark.parametrize(
    "question",
    [
        QUESTION,
        "What activities does Melanie partake in?",
        "What kinds of outings has Caroline taken the children on?",
        "What LGBTQ+ events has Caroline participated in?",
        "Where has Melanie camped?",
        "How many times has Melanie gone to the beach?",
        "Would Caroline enjoy a weekend backpacking in the mountains?",
        "Is Andrew the sort of person who would join a sports league?",
    ],
)
def test_lists_and_dispositions_ask_about_happenings(question):
    assert asks_about_happenings(question)


@pytest.mark.parametrize(
    "question",
    [
        "When did Caroline go to the support group?",  # asks when: the ``when`` signal
        "What is Caroline's identity?",
        "What class has Jon joined?",  # one thing, not a list
        "What does Tomas do for work these days?",  # a name, not a plural
        "How many days did Caroline spend in Lisbon?",
        "What did Caroline buy?",
    ],
)
def test_other_questions_do_not(question):
    assert not asks_about_happenings(question)


@pytest.mark.parametrize(
    ("telling", "signal", "not_taken"),
    [
        # It says when (and narrates): the happening signal, never ``when`` as well.
        ("Caroline: I started guitar lessons last weekend and lately it is all I do", "happening", "when"),
        # It narrates without saying when.
        ("Caroline: I signed up for salsa lessons at the community center lately", "narrating", "happening"),
    ],
)
def test_the_turns_that_told_happenings_come_before_small_talk_and_say_why(
    session, api, telling, signal, not_taken
):
    small_talk = session("Caroline: Lately work has been nonstop")  # shorter: BM25 prefers it
    told = session(telling)
    body = search(api, QUESTION)
    assert served(body).index(str(told.id)) < served(body).index(str(small_talk.id))
    weight = getattr(WEIGHTS[DEFAULT_VERSION], signal)
    explanation = item_of(body, told)["explanation"]
    assert explanation[signal] == {"value": 1.0, "weight": weight, "contribution": weight} and weight > 0
    assert explanation[not_taken]["value"] == 0.0
    assert item_of(body, small_talk)["explanation"][signal]["value"] == 0.0
    item = item_of(body, told)
    assert item["score"] == pytest.approx(
        sum(s["contribution"] for s in item["explanation"].values()), abs=1e-3
    )


def test_a_question_that_asks_when_takes_when_not_happening(session, api):
    telling = session("Caroline: I went to a support group yesterday and it was so powerful")
    body = search(api, "When did Caroline go to the support group?")
    assert item_of(body, telling)["explanation"]["when"]["value"] == 1.0
    assert item_of(body, telling)["explanation"]["happening"] == ZERO


def test_a_question_about_one_thing_gives_no_value(session, api):
    telling = session("Caroline: I bought a new desk last weekend")
    body = search(api, "What did Caroline buy for her desk?")
    assert item_of(body, telling)["explanation"]["happening"] == ZERO


def test_a_masked_turn_that_says_when_takes_no_value(session, api):
    session("Caroline: Lately work has been nonstop")
    masked = session("Caroline: I started guitar lessons last weekend, lately", sensitivity="confidential")
    body = search(api, QUESTION)
    assert item_of(body, masked)["return_mode"] == "masked"
    assert item_of(body, masked)["explanation"]["happening"] == ZERO


def test_the_previous_weights_version_ranks_without_it(session, api, agent, settings):
    small_talk = session("Caroline: Lately work has been nonstop")
    guitar = session("Caroline: I started guitar lessons last weekend and lately it is all I do")
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2027-02-16.1"}
    body = search(api, QUESTION)
    assert body["weights_version"] == "2027-02-16.1"
    assert served(body).index(str(small_talk.id)) < served(body).index(str(guitar.id))
    assert item_of(body, guitar)["explanation"]["happening"] == {
        "value": 0.0,
        "weight": 0.0,
        "contribution": 0.0,
    }


def test_a_turn_that_asks_tells_nothing_whatever_words_of_time_it_holds(session, api):
    asking = session("Caroline: Any pastimes lately? Any plans for the weekend?")
    guitar = session("Caroline: I started guitar lessons last weekend and lately it is all I do")
    body = search(api, QUESTION)
    assert item_of(body, asking)["explanation"]["happening"] == ZERO
    assert item_of(body, guitar)["explanation"]["happening"]["value"] == 1.0
    assert served(body).index(str(guitar.id)) < served(body).index(str(asking.id))


def test_before_2027_03_02_a_turn_that_asks_took_the_value(session, api, agent, settings):
    asking = session("Caroline: Any pastimes lately? Any plans for the weekend?")
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2027-02-23.1"}
    body = search(api, QUESTION)
    assert item_of(body, asking)["explanation"]["happening"]["value"] == 1.0


@pytest.mark.parametrize(
    "statement",
    [
        "Paul and I flew to Chicago, a long overdue getaway",
        "I started volunteering at a dog rescue",
        "We went camping with the kids, so fun",
    ],
)
def test_a_turn_with_a_verb_in_the_past_narrates(statement):
    assert narrates(statement)


@pytest.mark.parametrize(
    "statement",
    [
        "Any plans for the weekend?",
        "Did you go camping?",  # it asks
        "It was great, I could never do that now",  # auxiliaries
        "I'm so excited",  # a state
        "I have been feeling tired",
        "I need a new hobby",
        None,
    ],
)
def test_other_turns_do_not(statement):
    assert not narrates(statement)


def test_narrating_counts_only_for_a_question_about_doings(session, api):
    salsa = session("Caroline: I signed up for salsa lessons at the community center")
    body = search(api, "What did Caroline sign up for at the community center?")
    assert item_of(body, salsa)["explanation"]["narrating"]["value"] == 0.0


def test_a_masked_turn_that_narrates_takes_no_value(session, api):
    session("Caroline: Lately work has been nonstop")
    masked = session("Caroline: I signed up for salsa lessons lately", sensitivity="confidential")
    body = search(api, QUESTION)
    assert item_of(body, masked)["return_mode"] == "masked"
    assert item_of(body, masked)["explanation"]["narrating"]["value"] == 0.0


def test_before_2027_03_09_narrating_weighed_nothing(session, api, agent, settings):
    small_talk = session("Caroline: Lately work has been nonstop")
    salsa = session("Caroline: I signed up for salsa lessons at the community center lately")
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2027-03-02.1"}
    body = search(api, QUESTION)
    assert served(body).index(str(small_talk.id)) < served(body).index(str(salsa.id))
    assert item_of(body, salsa)["explanation"]["narrating"]["weight"] == 0.0


@pytest.mark.parametrize("question", [QUESTION, "When did Caroline start guitar lessons?"])
def test_the_signals_read_no_more_than_a_question_without_them(session, api, question):
    """Whether a candidate says when or narrates comes with the candidates, on either database:
    their statements are read in the same query, never in one of their own."""
    session("Caroline: I started guitar lessons last weekend and lately it is all I do")
    session("Caroline: Lately work has been nonstop")
    with CaptureQueriesContext(connection) as asked:
        body = search(api, question)
    assert {
        item["explanation"]["narrating" if question == QUESTION else "when"]["value"]
        for item in body["results"]
    } == {0.0, 1.0}
    with CaptureQueriesContext(connection) as told:
        search(api, "Tell me about Caroline and her guitar lessons lately")  # neither signal
    assert len(asked) == len(told)
