"""``bench.levers`` asks what recall serves and puts every lever it tries back as it was."""

import pytest

from bench import levers
from bench.conversations import Question
from memory_core import first_stage, ranking
from memory_core.models import AccessEvent
from tests.factories import make_evidence


@pytest.mark.parametrize("name", sorted(levers.LEVERS))
def test_each_lever_leaves_the_ranking_as_it_found_it(name):
    version, weights, spread = ranking.DEFAULT_VERSION, dict(ranking.WEIGHTS), first_stage.SPREAD_HITS
    with levers.LEVERS[name]():
        pass
    assert (version, weights, spread) == (ranking.DEFAULT_VERSION, ranking.WEIGHTS, first_stage.SPREAD_HITS)


def test_a_weights_lever_ranks_with_the_changed_weights_only_inside_it():
    with levers.LEVERS["answer-1.0"]():
        assert ranking.WEIGHTS[ranking.DEFAULT_VERSION].answer == 1.0
    assert ranking.WEIGHTS[ranking.DEFAULT_VERSION].answer != 1.0


def test_asking_serves_the_turn_keys_recall_serves_and_keeps_nothing_it_read(agent, api, remember):
    session = make_evidence(agent.agent, kind="conversation")
    asked = remember("Tomas: How was the clay workshop?", type="episodic_event", evidence=session)
    reply = remember("Maya: So messy and so fun", type="episodic_event", evidence=session)
    keys = {str(asked.id): "t1", str(reply.id): "t2"}
    question = Question(text="What was the clay workshop like?", category="single_hop", gold=("t2",))
    answers, seconds = levers._ask(agent.tenant, [question], keys)
    assert not AccessEvent.objects.exists()  # each question's reads are rolled back with it
    body = api.post("/api/v1/recall/search", {"query": question.text, "limit": 10}, format="json").json()
    assert answers == [[keys[item["memory"]["memory_id"]] for item in body["results"]]]
    assert answers[0][:2] == ["t1", "t2"] and len(seconds) == 1
    with levers.LEVERS["2026-12-22.1"]():
        assert levers._ask(agent.tenant, [question], keys)[0] == answers
