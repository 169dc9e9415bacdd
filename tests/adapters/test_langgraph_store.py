"""CustodianStore against a live Custodian with a real executor: LangGraph's store API, governed."""

import asyncio
import dataclasses
from typing import Any, TypedDict

import pytest
from custodian_client import AsyncCustodian, Custodian
from custodian_client import errors as e
from custodian_client.langgraph import CustodianStore, PendingReview, Placement, dedupe_key, default_route
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from tests.factories import make_agent
from tests.live import make_reviewer

live = pytest.mark.django_db(transaction=True)
ALICE = ("user", "pm-alice")
NESTED = {
    "text": "Alice reads the weekly summary on Mondays",
    "cadence": {"every": "week", "day": "monday", "hours": [9, 17.5]},
    "channels": ["email", {"kind": "chat", "muted": False}],
    "note": None,
    "ratio": 0.25,
    "unicode": "Zürich — 東京",
}


def owner_store(live_server, token: str, **options: Any) -> CustodianStore:
    """Alice's own store: the agent acts for the namespace's subject, who said it explicitly."""
    return CustodianStore(Custodian(live_server.url, token), consent_basis="explicit", **options)


def memories_holding(live_server, token: str, namespace: tuple[str, ...], key: str) -> list[dict]:
    with Custodian(live_server.url, token) as custodian:
        found = custodian.recall(
            "",
            filters={"dedupe_key": dedupe_key(namespace, key)},
            include_inactive=True,
            policy_context={"acting_for_subject": {"kind": "user", "id": "pm-alice"}},
        )
    return [result["memory"] for result in found["results"]]


@pytest.mark.services
@live
def test_a_nested_value_round_trips_and_a_second_put_updates_the_same_memory(live_server, agent, executor):
    store = owner_store(live_server, agent.token)
    namespace = (*ALICE, "prefs")
    store.put(namespace, "reading", NESTED)
    item = store.get(namespace, "reading")
    assert item is not None and (item.namespace, item.key, item.value) == (namespace, "reading", NESTED)

    store.put(namespace, "reading", {**NESTED, "cadence": {"every": "day"}})
    assert store.get(namespace, "reading").value["cadence"] == {"every": "day"}
    [memory] = memories_holding(live_server, agent.token, namespace, "reading")
    assert (memory["revision"], memory["state"], memory["type"], memory["scope"]) == (
        2,
        "active",
        "preference",
        "user",
    )
    assert memory["subject"] == {"kind": "user", "id": "pm-alice"}
    store.put(namespace, "reading", {**NESTED, "cadence": {"every": "day"}})  # the same value: no proposal
    assert memories_holding(live_server, agent.token, namespace, "reading")[0]["revision"] == 2
    assert store.get(namespace, "other-key") is None and store.get((*ALICE, "elsewhere"), "reading") is None


@pytest.mark.services
@live
def test_search_is_governed_recall_with_filter_limit_and_offset(live_server, agent, executor):
    store = owner_store(live_server, agent.token)
    store.put((*ALICE, "notes"), "a", {"text": "Alice trades momentum factors", "desk": "quant", "n": 1})
    store.put((*ALICE, "notes"), "b", {"text": "Alice prefers momentum charts", "desk": "macro", "n": 2})
    store.put((*ALICE, "other"), "c", {"text": "Alice likes momentum talks", "desk": "quant", "n": 3})

    found = store.search((*ALICE, "notes"), query="momentum")
    assert sorted(item.key for item in found) == ["a", "b"] and all(item.score is not None for item in found)
    assert [i.key for i in store.search(ALICE, query="momentum", filter={"desk": "quant"})] != []
    assert sorted(i.key for i in store.search(ALICE, filter={"desk": "quant"})) == ["a", "c"]
    assert [i.key for i in store.search(ALICE, filter={"n": {"$gte": 2}, "desk": "quant"})] == ["c"]
    everything = store.search(ALICE, limit=10)
    assert len(everything) == 3
    assert [i.key for i in store.search(ALICE, limit=2, offset=1)] == [i.key for i in everything[1:3]]
    assert store.search((*ALICE, "nothing-here")) == []


@pytest.mark.services
@live
def test_delete_proposes_a_delete_and_the_key_can_be_used_again(live_server, agent, executor):
    store = owner_store(live_server, agent.token)
    namespace = (*ALICE, "prefs")
    store.put(namespace, "theme", {"text": "Alice likes dark mode"})
    [memory] = memories_holding(live_server, agent.token, namespace, "theme")
    store.delete(namespace, "theme")
    assert store.get(namespace, "theme") is None
    with Custodian(live_server.url, agent.token) as custodian:  # a tombstone, shown metadata only
        tombstone = custodian.get_memory(memory["memory_id"], acting_for="user:pm-alice")
    assert (tombstone["memory"]["state"], tombstone["return_mode"]) == ("deleted", "metadata_only")
    store.delete(namespace, "theme")  # nothing left to delete: no proposal
    store.put(namespace, "theme", {"text": "Alice likes light mode"})
    assert store.get(namespace, "theme").value == {"text": "Alice likes light mode"}


@pytest.mark.services
@live
def test_list_namespaces_names_what_the_caller_may_read(live_server, agent, executor):
    store = owner_store(live_server, agent.token)
    for namespace in [(*ALICE, "prefs"), (*ALICE, "notes", "2026"), ("memories", "pm-alice")]:
        store.put(namespace, "k", {"text": f"Alice wrote into {'/'.join(namespace)}"})
    assert store.list_namespaces(prefix=ALICE) == [(*ALICE, "notes", "2026"), (*ALICE, "prefs")]
    assert store.list_namespaces(prefix=ALICE, max_depth=3) == [(*ALICE, "notes"), (*ALICE, "prefs")]
    assert store.list_namespaces(suffix=("2026",)) == [(*ALICE, "notes", "2026")]
    assert ("memories", "pm-alice") in store.list_namespaces()
    assert store.list_namespaces(limit=1, offset=1) == [sorted(store.list_namespaces())[1]]


@pytest.mark.services
@live
def test_the_async_methods_run_on_the_async_client(live_server, agent, executor):
    async def flow() -> tuple:
        async with AsyncCustodian(live_server.url, agent.token) as client:
            store = CustodianStore(async_client=client, consent_basis="explicit")
            namespace = ("memories", "pm-alice")
            await store.aput(namespace, "diet", NESTED)
            got = await store.aget(namespace, "diet")
            found = await store.asearch(namespace, query="weekly summary")
            spaces = await store.alist_namespaces(prefix=("memories",))
            await store.adelete(namespace, "diet")
            return got.value, [i.key for i in found], spaces, await store.aget(namespace, "diet")

    value, keys, spaces, after = asyncio.run(flow())
    assert (value, keys, spaces, after) == (NESTED, ["diet"], [("memories", "pm-alice")], None)
    with pytest.raises(TypeError):
        CustodianStore(async_client=AsyncCustodian(live_server.url, agent.token)).get(("memories", "x"), "k")


class Turn(TypedDict):
    user_id: str
    said: str
    recalled: list[str]
    got: dict


def remember(state: Turn, runtime: Runtime) -> dict:
    assert runtime.store is not None
    runtime.store.put(("memories", state["user_id"]), "cadence", {"text": state["said"], "cadence": "weekly"})
    return {}


def recall(state: Turn, runtime: Runtime) -> dict:
    assert runtime.store is not None
    namespace = ("memories", state["user_id"])
    found = runtime.store.search(namespace, query="weekly summaries")
    item = runtime.store.get(namespace, "cadence")
    return {"recalled": [i.value["text"] for i in found], "got": item.value if item else {}}


def graph(store: BaseStore):
    builder = StateGraph(Turn)
    builder.add_node(remember)
    builder.add_node(recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    return builder.compile(store=store)


@pytest.mark.services
@live
def test_a_compiled_graph_puts_then_recalls_through_the_injected_store(live_server, agent, executor):
    store = CustodianStore.from_url(live_server.url, agent.token, consent_basis="explicit")
    turn = {"user_id": "pm-alice", "said": "Weekly summaries, please.", "recalled": [], "got": {}}
    out = graph(store).invoke(turn)
    assert out["recalled"] == ["Weekly summaries, please."]
    assert out["got"] == {"text": "Weekly summaries, please.", "cadence": "weekly"}
    again = asyncio.run(graph(store).ainvoke({**turn, "said": "Weekly summaries, on Fridays."}))
    assert again["got"]["text"] == "Weekly summaries, on Fridays."
    asyncio.run(store.aclose())


def team_facts(namespace: tuple[str, ...]) -> Placement:
    """The desk's shared facts: org quant-desk's memories in shared_team scope."""
    return Placement("org", namespace[1], "shared_team", "semantic_fact")


@pytest.mark.services
@live
def test_a_put_that_needs_review_is_pending_and_not_stored_until_a_reviewer_approves(
    live_server, agent, executor
):
    store = CustodianStore(Custodian(live_server.url, agent.token), route=team_facts)
    namespace, value = ("org", "quant-desk", "factors"), {"text": "momentum_12_1 IC is unstable", "ic": 0.012}
    with pytest.raises(PendingReview) as pending:
        store.put(namespace, "momentum_12_1", value)
    assert "shared_fact_requires_review" in pending.value.reason_codes
    assert store.get(namespace, "momentum_12_1") is None
    assert store.search(("org", "quant-desk")) == []

    pm = Custodian(live_server.url, make_reviewer("pm-store", agent.tenant).token)
    queued = {p["id"]: p for p in pm.review_queue()}[pending.value.proposal_id]
    pm.decide(queued["id"], "approve", reason="confirmed", action_digest=queued["action_digest"])
    Custodian(live_server.url, agent.token).wait_for_receipt(pending.value.proposal_id, timeout=60)
    assert store.get(namespace, "momentum_12_1").value == value


def confidential(namespace: tuple[str, ...]) -> Placement:
    return dataclasses.replace(default_route(namespace), sensitivity="confidential")


@pytest.mark.services
@live
def test_another_agent_without_a_grant_reads_through_the_store_no_more_than_recall_gives(
    live_server, agent, executor
):
    owner = owner_store(live_server, agent.token, route=confidential)
    namespace = (*ALICE, "hr")
    with pytest.raises(PendingReview) as pending:  # confidential: a person decides
        owner.put(namespace, "band", {"text": "Alice's salary band is B7", "band": "B7"})
    pm = Custodian(live_server.url, make_reviewer("pm-hr", agent.tenant).token)
    queued = {p["id"]: p for p in pm.review_queue()}[pending.value.proposal_id]
    pm.decide(queued["id"], "approve", reason="HR record", action_digest=queued["action_digest"])
    Custodian(live_server.url, agent.token).wait_for_receipt(pending.value.proposal_id, timeout=60)
    assert owner.get(namespace, "band").value["band"] == "B7"

    stranger = make_agent(agent.tenant.name, "stranger-agent", acts_for=())
    as_itself = CustodianStore(Custodian(live_server.url, stranger.token), acting_for=None)
    assert as_itself.get(namespace, "band") is None
    assert as_itself.search(ALICE, query="salary band") == []
    assert as_itself.list_namespaces() == []
    with Custodian(live_server.url, stranger.token) as custodian:  # what recall itself gives it
        found = custodian.recall("", filters={"dedupe_key": dedupe_key(namespace, "band")})
    assert [r["return_mode"] for r in found["results"]] == ["masked"]
    claiming = CustodianStore(Custodian(live_server.url, stranger.token))  # acts for the namespace's subject
    with pytest.raises(e.ActingForNotGranted):
        claiming.get(namespace, "band")
    with pytest.raises(e.ActingForNotGranted):
        claiming.put(namespace, "band", {"text": "Alice's band is A1", "band": "A1"})
    assert owner.get(namespace, "band").value["band"] == "B7"
