"""The episode signal: the turns just before and after a good hit come up with it, bounded and explained.

An answer in a chat often shares no word with the question ("Finally, yes! On
Tuesday night"): the turn before it does. The first stage
(``memory_core.first_stage``) gives each turn beside one of the best hits that
hit's lexical value, weighted by ``episode`` in the ranking weights. Only a
hit served ``raw`` lends anything, so a masked or fenced memory never moves
another. The turn right after a hit that asks (its last sentence ends in "?")
is its likely reply, and weighs ``answer`` instead; the teller's reply to a
listener's question about a hit weighs ``follow_up``, and the story told after
the answer to a hit that asks and a second question, ``answer_follow_up``.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_core.ranking import DEFAULT_VERSION, WEIGHTS
from provenance.services import invalidate_evidence_revision
from tests.factories import make_evidence
from tests.recall.searching import search, served

EPISODE = WEIGHTS[DEFAULT_VERSION].episode
ANSWERS = WEIGHTS[DEFAULT_VERSION].answer
QUESTION = "Tomas: How was that clay workshop you signed the kids up for?"
ANSWER = "Maya: So messy and so fun, everyone made something"


def one_at_a_time(api, query: str) -> list[str]:
    """Every memory the search serves, a page of one at a time, following the cursor."""
    seen, cursor = [], None
    while True:
        page = search(api, query, limit=1, **({"cursor": cursor} if cursor else {}))
        seen += served(page)
        cursor = page["next_cursor"]
        if not cursor:
            return seen


@pytest.fixture
def turn(remember):
    """A turn of a conversation: an ``episodic_event`` memory resting on its session."""

    def make(statement: str, **fields):
        return remember(statement, type="episodic_event", **fields)

    return make


@pytest.fixture
def chat(agent, turn):
    """A session where the answer shares no word with the search, and one elsewhere that does."""

    def make(**question_fields):
        session = make_evidence(agent.agent, kind="conversation")
        turn("Tomas: Morning! Long week?", evidence=session)
        question = turn(QUESTION, evidence=session, **question_fields)
        answer = turn(ANSWER, evidence=session)
        turn("Tomas: Ha, I bet the car needed a wash after", evidence=session)
        elsewhere = turn("Maya: The pottery place downtown runs a workshop on Sundays")
        return question, answer, elsewhere

    return make


def test_the_answer_beside_a_hit_is_served_and_says_why(chat, api):
    question, answer, _ = chat()
    body = search(api, "What kind of workshop did the kids go to?")
    assert served(body)[0] == str(question.id)
    assert str(answer.id) in served(body)
    item = next(item for item in body["results"] if item["memory"]["memory_id"] == str(answer.id))
    lexical = body["results"][0]["explanation"]["lexical"]["value"]
    assert item["explanation"]["lexical"]["value"] == 0.0
    assert item["explanation"]["episode"] == {
        "value": lexical,
        "weight": ANSWERS,
        "contribution": round(lexical * ANSWERS, 4),
        "beside": str(question.id),
        "answers": True,
    }
    contributions = sum(signal["contribution"] for signal in item["explanation"].values())
    assert item["score"] == pytest.approx(contributions, abs=1e-3)
    assert body["results"][0]["explanation"]["episode"]["weight"] == EPISODE


def test_the_reply_to_a_question_weighs_more_than_a_turn_beside_a_statement(agent, api, turn):
    assert ANSWERS > EPISODE > 0
    asked = make_evidence(agent.agent, kind="conversation")
    turn("Maya: So, the clay workshop?", evidence=asked)
    reply = turn("Tomas: Messy and fun, everyone made a bowl", evidence=asked)
    told = make_evidence(agent.agent, kind="conversation")
    turn("Maya: The clay workshop.", evidence=told)
    after_statement = turn("Tomas: Messy and fun, the kids made a vase", evidence=told)
    body = search(api, "clay workshop")
    items = {item["memory"]["memory_id"]: item for item in body["results"]}
    assert items[str(reply.id)]["explanation"]["episode"]["weight"] == ANSWERS
    assert items[str(reply.id)]["explanation"]["episode"]["answers"] is True
    assert items[str(after_statement.id)]["explanation"]["episode"]["weight"] == EPISODE
    assert "answers" not in items[str(after_statement.id)]["explanation"]["episode"]
    assert served(body).index(str(reply.id)) < served(body).index(str(after_statement.id))


def test_the_turn_before_a_question_is_not_its_answer(agent, api, turn):
    session = make_evidence(agent.agent, kind="conversation")
    before = turn("Tomas: Morning, long week", evidence=session)
    question = turn(QUESTION, evidence=session)
    body = search(api, "What kind of workshop did the kids go to?")
    item = next(item for item in body["results"] if item["memory"]["memory_id"] == str(before.id))
    assert item["explanation"]["episode"]["beside"] == str(question.id)
    assert item["explanation"]["episode"]["weight"] == EPISODE
    assert "answers" not in item["explanation"]["episode"]


def test_the_previous_weights_version_gives_the_reply_only_the_episode_weight(chat, api, agent, settings):
    _, answer, _ = chat()
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2026-12-22.1"}
    body = search(api, "What kind of workshop did the kids go to?")
    item = next(item for item in body["results"] if item["memory"]["memory_id"] == str(answer.id))
    assert item["explanation"]["episode"]["weight"] == WEIGHTS["2026-12-22.1"].episode
    assert "answers" not in item["explanation"]["episode"]


@pytest.mark.parametrize("memory_type", ["preference", "episodic_event"])
def test_memories_citing_one_document_do_not_lift_each_other(agent, api, remember, memory_type):
    """Only a conversation's turns have an order that means something, not memories from one report."""
    report = make_evidence(agent.agent, kind="document")
    hit = remember("The momentum workshop found unstable IC", evidence=report, type=memory_type)
    after = remember("Liquidity screens removed small caps", evidence=report, type=memory_type)
    body = search(api, "momentum workshop")
    assert served(body) == [str(hit.id)]
    assert str(after.id) not in served(body)


def test_a_turn_with_no_matching_word_and_no_hit_beside_it_is_not_served(chat, api):
    _, answer, _ = chat()
    body = search(api, "pottery downtown Sundays")
    assert str(answer.id) not in served(body)


def test_a_masked_hit_lends_its_neighbours_nothing(chat, api):
    question, answer, _ = chat(sensitivity="confidential", subject={"kind": "user", "id": "bob"})
    body = search(api, "What kind of workshop did the kids go to?")
    modes = {item["memory"]["memory_id"]: item["return_mode"] for item in body["results"]}
    assert modes.get(str(question.id)) == "masked"
    assert str(answer.id) not in modes


def test_a_fenced_hit_lends_its_neighbours_nothing(chat, api):
    question, answer, _ = chat()
    session = question.evidence_links.get().evidence_revision
    invalidate_evidence_revision(revision=session, reason="wrong chat")
    body = search(api, "What kind of workshop did the kids go to?")
    modes = {item["memory"]["memory_id"]: item["return_mode"] for item in body["results"]}
    assert modes.get(str(question.id)) == "metadata_only"
    assert str(answer.id) not in modes


def test_the_previous_weights_version_gives_the_episode_no_weight(chat, api, agent, settings):
    _, answer, _ = chat()
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2026-12-15.1"}
    body = search(api, "What kind of workshop did the kids go to?")
    assert body["weights_version"] == "2026-12-15.1"
    assert str(answer.id) not in served(body)


def test_paging_goes_through_hits_and_neighbours_once_each(chat, api):
    question, answer, elsewhere = chat()
    first = search(api, "workshop kids", limit=50)
    assert {str(question.id), str(answer.id), str(elsewhere.id)} <= set(served(first))
    assert one_at_a_time(api, "workshop kids") == served(first)


def test_the_episode_signal_costs_the_same_queries_for_one_hit_or_many(chat, api):
    chat()

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            search(api, "workshop kids")
        return len(captured.captured_queries)

    once = queries()
    chat()
    chat()
    assert queries() == once


def test_past_the_first_stage_the_lexical_candidates_go_on_without_repeating_its_neighbours(
    chat, api, turn, monkeypatch
):
    """With more candidates than the first stage reorders, the windows go on in BM25 order after it."""
    for name in ("memory_core.recall.WINDOW", "memory_core.recall.POOL", "memory_core.first_stage.POOL"):
        monkeypatch.setattr(name, 2)
    question, _, elsewhere = chat()
    more = [turn(f"Maya: another workshop note number {n}") for n in range(3)]
    seen = one_at_a_time(api, "workshop")
    assert len(seen) == len(set(seen))
    assert {str(m.id) for m in (question, elsewhere, *more)} <= set(seen)


def test_a_neighbour_the_search_filters_leave_out_is_not_brought_in(agent, api, turn):
    session = make_evidence(agent.agent, kind="conversation")
    question = turn(QUESTION, evidence=session)
    answer = turn(ANSWER, evidence=session, subject={"kind": "user", "id": "pm-bob"})
    asked = "What kind of workshop did the kids go to?"
    assert str(answer.id) in served(search(api, asked))
    body = search(api, asked, filters={"subject": {"kind": "user", "id": "pm-alice"}})
    assert served(body) == [str(question.id)]


FOLLOW_UP = WEIGHTS[DEFAULT_VERSION].follow_up
TOLD = "Maya: Treated myself and got an espresso machine"
REPLY = "It was on sale, about two hundred bucks"  # no word of the question
PAID = "How much did Maya pay for the espresso machine?"


@pytest.fixture
def told(agent, turn):
    """A session: a turn telling something, a listener's question about it, the teller's reply."""

    def make(asked: str = "Tomas: Ooh, was it worth it?", **asked_fields):
        session = make_evidence(agent.agent, kind="conversation")
        hit = turn(TOLD, evidence=session)
        between = turn(asked, evidence=session, **asked_fields)
        reply = turn(REPLY, evidence=session)
        turn("Tomas: Ha, nice", evidence=session)
        return hit, between, reply

    return make


def test_the_reply_to_a_question_about_a_hit_comes_up_and_says_so(told, api):
    hit, _, reply = told()
    body = search(api, PAID)
    assert served(body)[0] == str(hit.id)
    item = next(item for item in body["results"] if item["memory"]["memory_id"] == str(reply.id))
    lexical = body["results"][0]["explanation"]["lexical"]["value"]
    assert item["explanation"]["lexical"]["value"] == 0.0
    assert item["explanation"]["episode"] == {
        "value": lexical,
        "weight": FOLLOW_UP,
        "contribution": round(lexical * FOLLOW_UP, 4),
        "beside": str(hit.id),
        "follows": True,
    }
    assert 0 < FOLLOW_UP < ANSWERS  # two turns away is a less sure reply than the next one


def test_a_turn_two_after_a_hit_is_nothing_when_the_one_between_does_not_ask(told, api):
    _, _, reply = told("Tomas: Nice one.")
    assert str(reply.id) not in served(search(api, PAID))


def test_a_question_the_reader_may_not_see_raw_lifts_no_reply(told, api):
    """Whether a withheld turn asks is its content: it never moves the turn after it."""
    _, between, reply = told(sensitivity="confidential", subject={"kind": "user", "id": "bob"})
    body = search(api, PAID)
    modes = {item["memory"]["memory_id"]: item["return_mode"] for item in body["results"]}
    assert modes.get(str(between.id)) == "masked"  # beside the hit, shown in the view it may have
    assert str(reply.id) not in modes


def test_the_previous_weights_version_lifts_no_reply_two_turns_away(told, api, agent, settings):
    _, _, reply = told()
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2027-01-12.1"}
    assert str(reply.id) not in served(search(api, PAID))


def test_a_question_the_filters_leave_out_lifts_no_reply(told, api):
    """The turn between must be a candidate: one the search's filters drop says nothing."""
    hit, between, reply = told(subject={"kind": "user", "id": "tomas"})
    body = search(api, PAID, filters={"subject": {"kind": "user", "id": "pm-alice"}})
    assert str(hit.id) in served(body)
    assert str(between.id) not in served(body) and str(reply.id) not in served(body)


ANSWER_FOLLOW_UP = WEIGHTS[DEFAULT_VERSION].answer_follow_up
ASKED_ABOUT = "Tomas: Did you make it to that support group you mentioned?"
STORY = "Maya: Everyone was so welcoming, one story really stayed with me"  # no word of the question
HOW = "How did the support group turn out?"


@pytest.fixture
def chained(agent, turn):
    """A session: a question, its short answer, the listener's "what was it like?", the story."""

    def make(opening: str = ASKED_ABOUT, **again_fields):
        session = make_evidence(agent.agent, kind="conversation")
        hit = turn(opening, evidence=session)
        turn("Maya: I did, two weekends ago", evidence=session)
        again = turn("Tomas: Oh nice, what was it like?", evidence=session, **again_fields)
        story = turn(STORY, evidence=session)
        turn("Tomas: Glad you made it", evidence=session)
        return hit, again, story

    return make


def test_the_reply_to_a_question_after_the_answer_to_a_hit_comes_up_and_says_so(chained, api):
    hit, _, story = chained()
    body = search(api, HOW)
    assert served(body)[0] == str(hit.id)
    item = next(item for item in body["results"] if item["memory"]["memory_id"] == str(story.id))
    lexical = body["results"][0]["explanation"]["lexical"]["value"]
    assert item["explanation"]["lexical"]["value"] == 0.0
    assert item["explanation"]["episode"] == {
        "value": lexical,
        "weight": ANSWER_FOLLOW_UP,
        "contribution": round(lexical * ANSWER_FOLLOW_UP, 4),
        "beside": str(hit.id),
        "follows_answer": True,
    }
    assert 0 < ANSWER_FOLLOW_UP <= FOLLOW_UP  # three turns away is no surer than two


def test_a_reply_three_after_a_hit_that_does_not_ask_is_nothing(chained, api):
    _, _, story = chained("Tomas: I hear that support group meets on Fridays.")
    assert str(story.id) not in served(search(api, HOW))


def test_a_second_question_the_reader_may_not_see_raw_lifts_no_reply(chained, api):
    """Whether a withheld turn asks is its content: it never moves the turn after it."""
    *_, story = chained(sensitivity="confidential", subject={"kind": "user", "id": "bob"})
    assert str(story.id) not in served(search(api, HOW))


def test_the_previous_weights_version_lifts_no_reply_three_turns_away(chained, api, agent, settings):
    _, _, story = chained()
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2027-01-19.1"}
    assert str(story.id) not in served(search(api, HOW))
