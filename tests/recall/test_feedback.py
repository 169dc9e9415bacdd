"""Owner feedback on recalled items: bound to a real recall, once per revision, bounded in ranking."""

import pytest

from memory_core.models import Memory, RecallFeedback
from tests.factories import make_agent
from tests.recall.searching import search


def vote(api, recall_id, memory, verdict="useful", revision=None):
    return api.post(
        f"/api/v1/recall/{recall_id}/feedback",
        {"memory_id": str(memory.id), "revision": revision or memory.revision, "verdict": verdict},
        format="json",
    )


def order(body: dict) -> list[str]:
    return [item["memory"]["memory_id"] for item in body["results"]]


def test_feedback_changes_a_later_ranking(api, remember):
    remember("desk note on the alpha book"), remember("desk note on the beta book")
    first = search(api, "desk note book")
    ahead, behind = order(first)  # equal words: the newer, or the nearer in meaning, first
    memories = {str(memory.id): memory for memory in Memory.objects.all()}
    assert vote(api, first["recall_id"], memories[behind], "useful").status_code == 201
    assert vote(api, first["recall_id"], memories[ahead], "not_useful").status_code == 201
    later = search(api, "desk note book")
    assert order(later) == [behind, ahead]
    explained = {item["memory"]["memory_id"]: item["explanation"]["feedback"] for item in later["results"]}
    assert explained[behind]["contribution"] > 0 > explained[ahead]["contribution"]


def test_feedback_is_recorded_as_served_and_answered(agent, api, remember):
    memory = remember("Alice prefers weekly summaries")
    recall_id = search(api, "weekly")["recall_id"]
    response = vote(api, recall_id, memory, "not_useful")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["recall_id"], body["memory_id"], body["revision"], body["verdict"]) == (
        recall_id,
        str(memory.id),
        1,
        "not_useful",
    )
    row = RecallFeedback.objects.get()
    assert (row.agent_id, row.tenant_id) == (agent.agent.id, agent.tenant.id)


def test_feedback_never_lifts_a_weaker_match_over_a_strong_one(api, remember):
    strong = remember("quarterly liquidity report for the treasury desk")
    weak = remember("treasury lunch menu")
    recall_id = search(api, "quarterly liquidity treasury")["recall_id"]
    assert vote(api, recall_id, weak, "useful").status_code == 201
    assert vote(api, recall_id, strong, "not_useful").status_code == 201
    assert order(search(api, "quarterly liquidity treasury"))[0] == str(strong.id)


def test_a_second_vote_on_the_same_revision_is_refused(api, remember):
    memory = remember("Alice prefers weekly summaries")
    assert vote(api, search(api, "weekly")["recall_id"], memory).status_code == 201
    again = vote(api, search(api, "weekly")["recall_id"], memory, "not_useful")
    assert (again.status_code, again.json()["code"]) == (409, "feedback_already_given")
    assert RecallFeedback.objects.count() == 1


def test_feedback_on_an_item_the_recall_never_served_is_refused(api, remember):
    served, other = remember("Alice prefers weekly summaries"), remember("unrelated ledger entry")
    recall_id = search(api, "weekly")["recall_id"]
    for memory, revision in [(other, 1), (served, 2)]:
        response = vote(api, recall_id, memory, revision=revision)
        assert (response.status_code, response.json()["code"]) == (422, "item_not_served")
    assert not RecallFeedback.objects.exists()


def test_feedback_on_another_tenants_recall_looks_like_a_missing_one(api, other_agent, remember):
    memory = remember("Alice prefers weekly summaries")
    recall_id = search(api, "weekly")["recall_id"]
    foreign = vote(other_agent.client, recall_id, memory)
    missing = vote(api, "00000000-0000-4000-8000-000000000000", memory)
    assert foreign.status_code == missing.status_code == 404
    assert foreign.json() == missing.json() and foreign.json()["code"] == "recall_not_found"
    assert not RecallFeedback.objects.exists()


def test_only_the_agent_that_recalled_may_vote(agent, api, remember):
    memory = remember("Alice prefers weekly summaries")
    recall_id = search(api, "weekly")["recall_id"]
    colleague = make_agent(agent.tenant.name, "colleague-agent")
    response = vote(colleague.client, recall_id, memory)
    assert (response.status_code, response.json()["code"]) == (404, "recall_not_found")


@pytest.mark.parametrize(
    "body",
    [
        {"memory_id": "not-a-uuid", "revision": 1, "verdict": "useful"},
        {"memory_id": "00000000-0000-4000-8000-000000000000", "revision": 0, "verdict": "useful"},
        {"memory_id": "00000000-0000-4000-8000-000000000000", "revision": 1, "verdict": "true"},
        {"memory_id": "00000000-0000-4000-8000-000000000000", "revision": 1, "verdict": "useful", "x": 1},
    ],
)
def test_bad_feedback_is_a_validation_error(api, remember, body):
    remember("Alice prefers weekly summaries")
    recall_id = search(api, "weekly")["recall_id"]
    response = api.post(f"/api/v1/recall/{recall_id}/feedback", body, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
