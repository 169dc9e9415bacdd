"""The LangGraph store's mapping, on its own: the rules docs/adapters/langgraph.md writes down."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from custodian_client.langgraph import (
    Placement,
    content_of,
    dedupe_key,
    default_route,
    matches_filter,
    namespace_matches,
    statement_of,
    stored_from,
)
from langgraph.store.base import InvalidNamespaceError, MatchCondition

CLIENT = Path(__file__).resolve().parent.parent.parent / "client" / "custodian_client"


def test_dedupe_keys_are_the_documented_digest():
    """The vectors on the docs page, so a store in another language can check itself."""
    assert dedupe_key(("user", "pm-alice"), "k") == (
        "langgraph:a661f77b336f49b72c60edfc6e99bddfacef8019466ae78932cb755bf420aade"
    )
    assert dedupe_key(("memories", "pm-alice", "prefs"), "Zürich") == (
        "langgraph:349aaa972146f4770e98c4d27b036901c8b7a042b6f027c9002808f0d464f0b3"
    )
    assert dedupe_key(("user", "a", "b"), "c") != dedupe_key(("user", "a"), "b")
    with pytest.raises(InvalidNamespaceError):
        dedupe_key(("user", "a"), "b\x00c")


def test_the_default_route_reads_a_subject_kind_or_an_alias_and_refuses_the_rest():
    assert default_route(("memories", "u-1", "x")) == Placement("user", "u-1", "user")
    assert default_route(("custom", "desk")).scope == "shared_team"
    assert default_route(("org", "quant-desk")).subject == {"kind": "org", "id": "quant-desk"}
    for namespace in [("user",), ("docs", "a"), ("langgraph", "x")]:
        with pytest.raises(InvalidNamespaceError):
            default_route(namespace)


def test_content_keeps_the_value_where_the_type_has_room_for_it():
    value = {"theme": "dark", "sizes": [1, 2.5, None]}
    preference = content_of(default_route(("user", "a", "ui")), ("user", "a", "ui"), "look", value)
    assert (preference["preference_key"], preference["preference_value"]) == ("look", value)
    assert preference["statement"] == '{"sizes": [1, 2.5, null], "theme": "dark"}'
    rule = content_of(Placement("org", "d", "org", "procedural_rule"), ("org", "d"), "k", {"text": "Do it"})
    assert (
        rule["statement"] == "Do it"
        and {"key": "langgraph.value", "value": {"text": "Do it"}} in rule["attributes"]
    )


def raw_result(placement: Placement, namespace, key, value, mode="raw") -> dict:
    return {
        "return_mode": mode,
        "score": 1.5,
        "memory": {
            "memory_id": "m-1",
            "revision": 3,
            "type": placement.memory_type,
            "content": content_of(placement, namespace, key, value),
            "created_at": "2026-12-01T10:00:00+00:00",
            "updated_at": "2026-12-01T11:00:00+00:00",
        },
    }


@pytest.mark.parametrize("memory_type", ["preference", "semantic_fact", "profile", "episodic_event"])
def test_an_item_is_rebuilt_exactly_from_a_raw_view(memory_type):
    placement, namespace = Placement("user", "a", "user", memory_type), ("user", "a", "deep")
    value = {"nested": {"list": [{"x": 1}], "flag": True}, "text": "hello"}
    stored = stored_from(raw_result(placement, namespace, "k" * 300, value))
    assert stored is not None
    assert (stored.item.namespace, stored.item.key, stored.item.value) == (namespace, "k" * 300, value)
    assert (stored.memory_id, stored.revision, stored.score) == ("m-1", 3, 1.5)


def test_no_item_comes_from_a_view_other_than_raw_or_a_memory_no_store_wrote():
    placement = Placement("user", "a", "user")
    for mode in ["summary", "masked", "metadata_only"]:
        assert stored_from(raw_result(placement, ("user", "a"), "k", {"v": 1}, mode)) is None
    foreign = raw_result(placement, ("user", "a"), "k", {"v": 1})
    foreign["memory"]["content"] = {"statement": "written by another client"}
    assert stored_from(foreign) is None


def test_filters_and_namespace_conditions_follow_langgraph():
    value = {"desk": "quant", "n": 2, "meta": {"lang": "en"}}
    assert matches_filter(value, {"desk": "quant", "n": {"$gte": 2, "$lt": 3}, "meta": {"lang": "en"}})
    assert not matches_filter(value, {"n": {"$gt": "x"}}) and not matches_filter(value, {"desk": "macro"})
    namespace = ("user", "a", "notes", "2026")
    assert namespace_matches(namespace, [MatchCondition("prefix", ("user", "*", "notes"))])
    assert namespace_matches(namespace, [MatchCondition("suffix", ("notes", "2026"))])
    assert not namespace_matches(namespace, [MatchCondition("suffix", ("notes",))])


def test_a_statement_is_a_text_field_else_a_rendering():
    assert statement_of({"memory": "  ", "text": "Alice likes tea"}) == "Alice likes tea"
    assert statement_of({}) == "(empty value)"
    assert len(statement_of({"text": "x" * 5000})) == 4000


def imported(path: Path) -> set[str]:
    """The top-level packages a module imports."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_only_the_store_module_imports_langgraph():
    assert {path.name for path in CLIENT.glob("*.py") if "langgraph" in imported(path)} == {"langgraph.py"}
    check = "import sys, custodian_client; assert not any(m.startswith('langgraph') for m in sys.modules)"
    subprocess.run([sys.executable, "-c", check], check=True, cwd=CLIENT.parent)
