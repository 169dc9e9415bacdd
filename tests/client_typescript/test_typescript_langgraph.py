"""The JavaScript LangGraph store and the Python one follow one mapping: each reads what the other wrote."""

import json

import pytest
from custodian_client import Custodian
from custodian_client.langgraph import CustodianStore, content_of, dedupe_key, default_route

from tests.client_typescript.node import node_env, run

# Namespace labels and keys in several scripts, values with what JSON can hold.
NAMESPACE = ("user", "pm-alice", "interop", "Zürich")
PYTHON_KEY, JAVASCRIPT_KEY = "written-in-python/😀", "written-in-javascript/ü"
PYTHON_VALUE = {
    "text": "Alice reads the weekly summary on Mondays",
    "cadence": {"every": "week", "hours": [9, 17.5]},
    "channels": ["email", {"kind": "chat", "muted": False}],
    "note": None,
    "ratio": 0.25,
    "whole": 1.0,
    "largest": 2**53 - 1,
    "unicode": "Zürich — 東京 😀",
    "empty": {"object": {}, "list": []},
}
JAVASCRIPT_VALUE = {"text": "Alice wants charts, not tables", "deep": {"in": [1, {"x": None}]}, "flag": True}
UPDATE = {**PYTHON_VALUE, "cadence": {"every": "day"}}

MAPPING_CASES = [
    (("user", "pm-alice"), "k", "preference", {"theme": "dark", "sizes": [1, 2.5, None]}),
    (("memories", "pm-alice", "prefs"), "Zürich", "semantic_fact", {"text": "Alice lives in Zürich"}),
    (("org", "quant-desk"), "k" * 300, "procedural_rule", {"summary": "Rebalance on Fridays", "n": 3}),
    (("custom", "desk", "😀"), "ключ", "profile", {"ü": {"b": True, "a": [False, "x"]}, "memory": "  "}),
    (("session", "s-1"), "empty", "episodic_event", {}),
]

PRINT_MAPPING = """
import { contentOf, dedupeKey, defaultRoute } from "./dist/langgraph.js";
const cases = JSON.parse(process.env.MAPPING_CASES);
const mapped = [];
for (const [namespace, key, memoryType, value] of cases) {
  const placement = defaultRoute(namespace, { memoryType });
  const content = contentOf(placement, namespace, key, value);
  mapped.push({ dedupe_key: await dedupeKey(namespace, key), placement, content });
}
console.log(JSON.stringify(mapped));
"""


def test_the_javascript_mapping_is_the_python_stores(package):
    """Placement, dedupe_key and content for the same inputs, key for key (statements included)."""
    env = node_env(MAPPING_CASES=json.dumps(MAPPING_CASES))
    mapped = json.loads(run(["node", "--input-type=module", "--eval", PRINT_MAPPING], env=env))
    for (namespace, key, memory_type, value), javascript in zip(MAPPING_CASES, mapped, strict=True):
        placement = default_route(namespace, memory_type=memory_type)
        assert javascript["dedupe_key"] == dedupe_key(namespace, key)
        assert javascript["placement"] == {
            "subjectKind": placement.subject_kind,
            "subjectId": placement.subject_id,
            "scope": placement.scope,
            "memoryType": placement.memory_type,
            "sensitivity": placement.sensitivity,
        }
        assert javascript["content"] == content_of(placement, namespace, key, value)


def revisions(live_server, token: str, key: str) -> list[int]:
    with Custodian(live_server.url, token) as custodian:
        found = custodian.recall(
            "",
            filters={"dedupe_key": dedupe_key(NAMESPACE, key)},
            policy_context={"acting_for_subject": {"kind": "user", "id": "pm-alice"}},
        )
    return [result["memory"]["revision"] for result in found["results"]]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_python_and_javascript_stores_read_each_others_items(
    package, live_server, agent, live_env, executor
):
    store = CustodianStore(Custodian(live_server.url, agent.token), consent_basis="explicit", wait_seconds=60)
    store.put(NAMESPACE, PYTHON_KEY, PYTHON_VALUE)

    plan = {
        "namespace": NAMESPACE,
        "python": {"key": PYTHON_KEY, "value": PYTHON_VALUE},
        "javascript": {"key": JAVASCRIPT_KEY, "value": JAVASCRIPT_VALUE},
        "update": UPDATE,
    }
    env = {**live_env, "CUSTODIAN_INTEROP": json.dumps(plan)}
    print(run(["node", "--test", "test/interop/"], env=env, timeout=300))

    written = store.get(NAMESPACE, JAVASCRIPT_KEY)
    assert written is not None
    assert (written.namespace, written.key, written.value) == (NAMESPACE, JAVASCRIPT_KEY, JAVASCRIPT_VALUE)
    assert store.get(NAMESPACE, PYTHON_KEY).value == UPDATE
    store.put(NAMESPACE, JAVASCRIPT_KEY, JAVASCRIPT_VALUE)  # what it says already: nothing proposed
    assert revisions(live_server, agent.token, JAVASCRIPT_KEY) == [1]
    assert sorted(item.key for item in store.search(NAMESPACE[:3])) == sorted([PYTHON_KEY, JAVASCRIPT_KEY])
    store.delete(NAMESPACE, JAVASCRIPT_KEY)
    assert store.get(NAMESPACE, JAVASCRIPT_KEY) is None
