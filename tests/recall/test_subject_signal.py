"""The question's person: a memory whose subject the question names is lifted, and joins the
candidates (stands in for them when no word matches).

A client that files each speaker's turns under their own subject
("c1-caroline") says who said a turn without writing "Caroline:" into it.
"What job does Caroline have?" should then serve Caroline's turn about her
job above Melanie's, and "Who is Caroline employed by?" (no word of which any
turn says) should serve Caroline's memories rather than nothing. Only
memories served ``raw`` take a value or stand in.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_core.ranking import DEFAULT_VERSION, WEIGHTS
from tests.factories import make_evidence
from tests.recall.searching import item_of, search, served

SUBJECT = WEIGHTS[DEFAULT_VERSION].subject
CAROLINE = {"kind": "user", "id": "c1-caroline"}
MELANIE = {"kind": "user", "id": "c1-melanie"}


@pytest.fixture
def chat(agent, remember):
    """One session: Melanie's job turn (shorter, so BM25 prefers it) and Caroline's."""
    session = make_evidence(agent.agent, kind="conversation")

    def turn(statement, subject, **fields):
        return remember(statement, type="episodic_event", evidence=session, subject=subject, **fields)

    return turn


def test_the_named_persons_memory_comes_first_and_says_why(chat, api):
    hers = chat("I started the new job at the shelter last week, long days", CAROLINE)
    other = chat("My job is fine", MELANIE)
    body = search(api, "What job does Caroline have?")
    assert served(body).index(str(hers.id)) < served(body).index(str(other.id))
    signal = item_of(body, hers)["explanation"]["subject"]
    assert signal["weight"] == SUBJECT > 0
    assert 0 < signal["value"] < 1  # "Caroline", not "job": a share of the question
    assert item_of(body, other)["explanation"]["subject"]["value"] == 0.0
    item = item_of(body, hers)
    assert item["score"] == pytest.approx(
        sum(s["contribution"] for s in item["explanation"].values()), abs=1e-3
    )


def test_the_previous_weights_version_ranks_by_words_alone(chat, api, agent, settings):
    hers = chat("I started the new job at the shelter last week, long days", CAROLINE)
    other = chat("My job is fine", MELANIE)
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2027-01-05.1"}
    body = search(api, "What job does Caroline have?")
    assert body["weights_version"] == "2027-01-05.1"
    assert served(body).index(str(other.id)) < served(body).index(str(hers.id))
    assert item_of(body, hers)["explanation"]["subject"] == {"value": 0.0, "weight": 0.0, "contribution": 0.0}


def test_when_no_word_matches_the_named_persons_memories_stand_in(chat, api, agent, settings):
    hers = chat("I started at the shelter last week", CAROLINE)
    chat("Work has been fine", MELANIE)
    body = search(api, "Who is Caroline employed by?")
    assert served(body) == [str(hers.id)]
    assert 0 < item_of(body, hers)["explanation"]["subject"]["value"] < 1  # "Caroline", not "employed"
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2027-01-05.1"}
    assert search(api, "Who is Caroline employed by?")["results"] == []


def test_a_withheld_memory_neither_takes_a_value_nor_stands_in(chat, api):
    masked = chat("I started the job at the shelter last week", CAROLINE, sensitivity="confidential")
    assert search(api, "Who is Caroline employed by?")["results"] == []
    chat("Caroline has a new job", MELANIE)  # a word matches: the masked turn is a candidate again
    body = search(api, "Caroline job")
    assert item_of(body, masked)["return_mode"] == "masked"
    assert item_of(body, masked)["explanation"]["subject"]["value"] == 0.0


def test_a_subject_that_only_begins_like_the_name_is_not_named(chat, api):
    chat("I started at the shelter last week", {"kind": "user", "id": "c1-carolina"})
    assert search(api, "Who is Caroline employed by?")["results"] == []


def test_a_named_subject_costs_one_query_for_its_memories_however_many(chat, api):
    chat("I started the new job at the shelter last week", CAROLINE)
    with CaptureQueriesContext(connection) as named:
        search(api, "What job does Caroline have?")
    with CaptureQueriesContext(connection) as unnamed:
        search(api, "What job does Priya have?")
    for n in range(5):
        chat(f"Errand number {n} is done", CAROLINE)
    with CaptureQueriesContext(connection) as more:
        search(api, "What job does Caroline have?")
    assert len(named) == len(unnamed) + 1 == len(more)


def test_another_tenants_person_never_stands_in(agent, other_agent, remember, api):
    session = make_evidence(other_agent.agent, kind="conversation")
    remember(
        "I started at the shelter last week",
        handle=other_agent,
        type="episodic_event",
        evidence=session,
        subject=CAROLINE,
    )
    assert search(api, "Who is Caroline employed by?")["results"] == []
    assert search(other_agent.client, "Who is Caroline employed by?")["results"]


def test_each_subject_stands_in_whatever_its_kind(chat, api):
    as_user = chat("I started at the shelter last week", CAROLINE)
    as_custom = chat("The badge was renewed", {"kind": "custom", "id": "caroline-badge"})
    assert set(served(search(api, "Who is Caroline employed by?"))) == {str(as_user.id), str(as_custom.id)}


DOINGS = "Which pastimes has Caroline taken up?"


@pytest.fixture
def elsewhere(agent, remember):
    """A turn of another session that shares a word with the question (so nothing stands in)."""
    session = make_evidence(agent.agent, kind="conversation")
    return remember("Which pastimes do you like?", type="episodic_event", evidence=session, subject=MELANIE)


def test_a_question_about_the_named_person_considers_every_memory_of_theirs(chat, api, elsewhere):
    salsa = chat("I signed up for salsa lessons at the community center", CAROLINE)
    other = chat("I signed up for pottery at the community center", MELANIE)
    body = search(api, DOINGS)
    assert str(salsa.id) in served(body) and str(other.id) not in served(body)
    explanation = item_of(body, salsa)["explanation"]
    assert explanation["lexical"]["value"] == 0.0  # it shares no word with the question
    assert explanation["subject"]["value"] > 0 and explanation["narrating"]["value"] == 1.0


def test_a_withheld_memory_of_the_named_person_does_not_join(chat, api, elsewhere):
    masked = chat("I signed up for salsa lessons", CAROLINE, sensitivity="confidential")
    assert str(masked.id) not in served(search(api, DOINGS))


def test_the_named_persons_memories_join_any_question_that_names_them(chat, api, agent, settings, elsewhere):
    salsa = chat("I signed up for salsa lessons at the community center", CAROLINE)
    body = search(api, "Which pastime is Caroline's favourite?")
    assert str(salsa.id) in served(body)
    assert item_of(body, salsa)["explanation"]["narrating"]["value"] == 0.0  # not about doings
    assert str(salsa.id) not in served(search(api, "Which pastime is Priya's favourite?"))
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2027-03-09.1"}
    assert str(salsa.id) not in served(search(api, DOINGS))


def test_another_tenants_person_never_joins(agent, other_agent, remember, api, elsewhere):
    session = make_evidence(other_agent.agent, kind="conversation")
    theirs = remember(
        "I signed up for salsa lessons at the community center",
        handle=other_agent,
        type="episodic_event",
        evidence=session,
        subject=CAROLINE,
    )
    assert str(theirs.id) not in served(search(api, DOINGS))
    assert served(search(other_agent.client, DOINGS)) == [str(theirs.id)]  # it stands in there
