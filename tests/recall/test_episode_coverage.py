"""Episode coverage: a turn is lifted by how much of the question its session holds between its turns.

"Where does Matthew live?" matches a turn of someone else's chat ("we saw
Coldplay live") as well as Matthew's own answer, which names only him. The
session Matthew talks in holds both words, across turns; the other holds one.
Only turns served ``raw`` hold words for their session and take a value.
"""

import pytest

from memory_core.ranking import DEFAULT_VERSION, WEIGHTS
from tests.factories import make_evidence
from tests.recall.searching import search, served

COVERAGE = WEIGHTS[DEFAULT_VERSION].coverage
QUERY = "Where does Matthew live?"


def explained(body: dict) -> dict[str, dict]:
    return {item["memory"]["memory_id"]: item["explanation"] for item in body["results"]}


@pytest.fixture
def chats(agent, remember):
    """Matthew's session (his answer, chit-chat, the word "live" far from it), another chat of his,
    and someone else's chat that says "live" in fewer words than his answer."""

    def make(**asking_fields):
        def turn(statement, session, **fields):
            return remember(statement, type="episodic_event", evidence=session, **fields)

        his = make_evidence(agent.agent, kind="conversation")
        answer = turn("Matthew: We moved into a duplex in Fairview, boxes everywhere", his)
        for filler in ("Priya: Oh wow, congrats", "Priya: So exciting", "Priya: Send pictures"):
            turn(filler, his)
        asking = turn("Priya: Do you like the area you live in?", his, **asking_fields)
        turn("Matthew: Sorted the garage shelves", make_evidence(agent.agent, kind="conversation"))
        other = turn("Victoria: We saw Coldplay live", make_evidence(agent.agent, kind="conversation"))
        return answer, asking, other

    return make


def test_the_turn_whose_session_holds_the_whole_question_comes_first_and_says_why(chats, api):
    answer, _, other = chats()
    body = search(api, QUERY)
    signals = explained(body)
    assert signals[str(answer.id)]["coverage"]["value"] == 1.0
    assert signals[str(answer.id)]["coverage"]["weight"] == COVERAGE > 0
    assert 0 < signals[str(other.id)]["coverage"]["value"] < 1
    assert served(body).index(str(answer.id)) < served(body).index(str(other.id))
    item = body["results"][served(body).index(str(answer.id))]
    assert item["score"] == pytest.approx(
        sum(s["contribution"] for s in item["explanation"].values()), abs=1e-3
    )


def test_the_previous_weights_version_ranks_the_other_chat_first(chats, api, agent, settings):
    answer, _, other = chats()
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2026-12-29.1"}
    body = search(api, QUERY)
    assert body["weights_version"] == "2026-12-29.1"
    assert served(body).index(str(other.id)) < served(body).index(str(answer.id))
    assert explained(body)[str(answer.id)]["coverage"]["weight"] == 0


def test_a_masked_turn_holds_no_words_for_its_session(chats, api):
    answer, asking, _ = chats(sensitivity="confidential", subject={"kind": "user", "id": "bob"})
    body = search(api, QUERY)
    signals = explained(body)
    assert (
        next(i for i in body["results"] if i["memory"]["memory_id"] == str(asking.id))["return_mode"]
        == "masked"
    )
    assert signals[str(asking.id)]["coverage"]["value"] == 0.0
    assert 0 < signals[str(answer.id)]["coverage"]["value"] < 1  # its session holds "Matthew" only


def test_memories_that_are_not_events_take_no_coverage(api, remember):
    memory = remember("Matthew lives in Fairview")
    body = search(api, QUERY)
    assert explained(body)[str(memory.id)]["coverage"]["value"] == 0.0
