"""Recall's dedupe_key filter: it narrows the candidates, the read policy still decides each one."""

from memory_core.models import AccessEvent
from tests.factories import make_agent


def search(api, query="", **body):
    response = api.post("/api/v1/recall/search", {"query": query, **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def served(body) -> dict[str, str]:
    return {item["memory"]["memory_id"]: item["return_mode"] for item in body["results"]}


ALICE_CONTEXT = {"acting_for_subject": {"kind": "user", "id": "pm-alice"}}


def test_the_filter_selects_the_memory_holding_the_key(api, remember):
    held = remember("Alice likes dark mode", dedupe_key="ui:theme")
    remember("Alice likes dark charts", dedupe_key="ui:charts")
    body = search(api, filters={"dedupe_key": "ui:theme"}, policy_context=ALICE_CONTEXT)
    assert served(body) == {str(held.id): "raw"}
    assert body["results"][0]["memory"]["dedupe_key"] == "ui:theme"


def test_another_tenant_finds_nothing_by_the_same_key(remember, other_agent):
    remember("Alice likes dark mode", dedupe_key="ui:theme")
    assert served(search(other_agent.client, filters={"dedupe_key": "ui:theme"})) == {}


def test_an_agent_without_the_grant_gets_no_more_than_recall_gives_it(agent, remember):
    secret = remember("Alice's salary band is B7", dedupe_key="hr:band", sensitivity="confidential")
    stranger = make_agent(agent.tenant.name, "stranger-agent", acts_for=())
    by_key = search(stranger.client, filters={"dedupe_key": "hr:band"})
    by_words = search(stranger.client, "salary band")
    assert served(by_key) == served(by_words) == {str(secret.id): "masked"}
    shown = by_key["results"][0]["memory"]
    assert (shown["content"]["statement"], shown["dedupe_key"]) == ("***", "***")
    external = {"data_zone": "external"}
    assert served(search(stranger.client, filters={"dedupe_key": "hr:band"}, policy_context=external)) == {}


def test_the_access_event_keeps_the_key_only_as_a_digest(agent, api, remember):
    remember("Alice likes dark mode", dedupe_key="user:pm-alice:theme")
    body = search(api, filters={"dedupe_key": "user:pm-alice:theme"})
    event = AccessEvent.objects.get(pk=body["recall_id"])
    assert "dedupe_key" not in event.filters and len(event.filters["dedupe_key_hmac"]) == 64
    assert "pm-alice" not in str(event.filters)
