"""A question that asks when: the turn that says when comes before the turns that only mention it.

"When did Caroline go to the support group?" matches the turn that told it
("I went to a support group yesterday") and a later one that mentions it in
passing. The telling turn holds a word of time, which with its session's date
answers the question: it takes the ``when`` signal. Only a turn served ``raw``
takes a value, and only when the question asks when.
"""

import pytest

from memory_core.ranking import DEFAULT_VERSION, WEIGHTS
from memory_core.when import asks_when, says_when
from tests.recall.searching import item_of, search, served

WHEN = WEIGHTS[DEFAULT_VERSION].when
QUESTION = "When did Caroline go to the support group?"


@pytest.mark.parametrize(
    "question",
    [QUESTION, "when was the move?", "What day did she start?", "How long ago did they meet?"],
)
def test_questions_about_time_ask_when(question):
    assert asks_when(question)


@pytest.mark.parametrize(
    "question", ["Where did Caroline go?", "What did Caroline say when she left?", "Who came last?"]
)
def test_other_questions_do_not(question):
    assert not asks_when(question)


def test_words_of_time_say_when_and_durations_do_not():
    assert says_when("Caroline: I went to a support group yesterday")
    assert says_when("We got back last weekend")
    assert says_when("It was on Tuesday night")
    assert says_when("Three weeks ago, in August")
    assert not says_when("We were there for five days")
    assert not says_when("The group has really helped me")
    assert not says_when(None)


def test_a_turn_that_asks_does_not_say_when():
    assert not says_when("Any plans for the weekend?")
    assert not says_when("Hey, happy Wednesday! What's new with you? 😊")
    assert says_when("Any plans for the weekend? We went camping last weekend.")
    assert says_when("Any plans for the weekend?", unless_asking=False)  # weights before 2027-03-02.1


def test_the_question_that_asked_gives_way_to_the_reply_that_told(session, api):
    asking = session("Melanie: Did you go to the support group yesterday?")
    reply = session("Caroline: I did, it was so powerful on Tuesday night")
    body = search(api, QUESTION)
    assert item_of(body, asking)["explanation"]["when"]["value"] == 0.0
    assert item_of(body, reply)["explanation"]["when"]["value"] == 1.0


def test_the_turn_that_says_when_comes_first_and_says_why(session, api):
    passing = session("Caroline: Going to the support group helps")  # shorter: BM25 prefers it
    telling = session("Caroline: I went to a support group yesterday and it was so powerful")
    body = search(api, QUESTION)
    assert served(body).index(str(telling.id)) < served(body).index(str(passing.id))
    signal = item_of(body, telling)["explanation"]["when"]
    assert signal == {"value": 1.0, "weight": WHEN, "contribution": WHEN} and WHEN > 0
    assert item_of(body, passing)["explanation"]["when"]["value"] == 0.0
    item = item_of(body, telling)
    assert item["score"] == pytest.approx(
        sum(s["contribution"] for s in item["explanation"].values()), abs=1e-3
    )


def test_a_question_that_does_not_ask_when_gives_no_value(session, api):
    telling = session("Caroline: I went to a support group yesterday and it was so powerful")
    body = search(api, "Where did Caroline go for support?")
    assert item_of(body, telling)["explanation"]["when"]["value"] == 0.0


def test_the_reply_that_says_when_takes_it_though_it_shares_no_word(session, api):
    session("Melanie: Did you end up going to the support group?")
    reply = session("Caroline: I did, on Tuesday night! Everyone was so kind")
    body = search(api, QUESTION)
    assert str(reply.id) in served(body)
    assert item_of(body, reply)["explanation"]["when"]["value"] == 1.0


def test_a_masked_turn_that_says_when_takes_no_value(session, api):
    session("Caroline: The support group really helps")
    masked = session("Caroline: I went to a support group yesterday", sensitivity="confidential")
    body = search(api, QUESTION)
    assert item_of(body, masked)["return_mode"] == "masked"
    assert item_of(body, masked)["explanation"]["when"] == {"value": 0.0, "weight": WHEN, "contribution": 0.0}


def test_the_previous_weights_version_ranks_without_it(session, api, agent, settings):
    passing = session("Caroline: Going to the support group helps")
    telling = session("Caroline: I went to a support group yesterday and it was so powerful")
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2027-02-02.1"}
    body = search(api, QUESTION)
    assert body["weights_version"] == "2027-02-02.1"
    assert served(body).index(str(passing.id)) < served(body).index(str(telling.id))
    assert item_of(body, telling)["explanation"]["when"] == {"value": 0.0, "weight": 0.0, "contribution": 0.0}
