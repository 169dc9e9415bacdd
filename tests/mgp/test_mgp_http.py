"""The MGP binding over HTTP: attackers first, then each reference-gateway bug we must not have."""

import pytest

from memory_core.models import Memory
from mgp.models import MgpRecord
from tests.mgp.conftest import call, memory, settle, verb, written

pytestmark = pytest.mark.django_db


def _error(response) -> str:
    body = response.json()
    assert body["status"] == "error" and body["data"] is None, body
    return body["error"]["code"]


# --- identity comes from the credential ---------------------------------------------------------


def test_a_context_naming_another_tenant_is_refused(runtime, intruder):
    write = call(runtime, "write", {"memory": memory()}, "write", tenant_id=intruder.tenant.name)
    assert write.status_code == 403 and _error(write) == "MGP_SCOPE_VIOLATION"
    read = call(runtime, "get", {"memory_id": "x"}, "read", tenant_id=intruder.tenant.name)
    assert read.status_code == 403 and _error(read) == "MGP_POLICY_DENIED"
    header = call(runtime, "get", {"memory_id": "x"}, "read", headers={"MGP-Tenant-Id": intruder.tenant.name})
    assert header.status_code == 403 and _error(header) == "MGP_SCOPE_VIOLATION"
    assert not Memory.objects.exists() and not MgpRecord.objects.exists()


def test_a_lying_actor_or_an_ungranted_subject_is_refused(runtime):
    actor = call(runtime, "write", {"memory": memory()}, "write", actor_agent="someone-else")
    assert actor.status_code == 403 and _error(actor) == "MGP_POLICY_DENIED"
    stranger = {"kind": "user", "id": "mallory"}
    subject = call(runtime, "write", {"memory": memory(subject=stranger)}, "write", subject=stranger)
    assert subject.status_code == 403 and _error(subject) == "MGP_POLICY_DENIED"


def test_without_an_agent_token_nothing_is_served(runtime, anonymous):
    response = anonymous.post("/mgp/get", {"request_id": "r"}, format="json")
    assert response.status_code == 401 and _error(response) == "MGP_POLICY_DENIED"


def test_another_tenant_cannot_see_take_over_or_probe_an_id(runtime, intruder):
    """Reference bug 5: upsert onto a foreign id took it over; a plain write revealed it with 409."""
    written(runtime, memory("shared_id", statement="Alice's secret plan is kiwi."))
    assert call(intruder, "get", {"memory_id": "shared_id"}, "read").status_code == 404
    takeover = memory("shared_id", statement="Mallory owns this now.")
    hint = {"strategy": "upsert", "if_match_memory_id": "shared_id"}
    response = call(intruder, "write", {"memory": takeover, "merge_hint": hint}, "write")
    assert response.status_code == 202  # a create in the intruder's own tenant, like for a new id
    mine = Memory.objects.get(tenant=runtime.tenant)
    assert mine.content["statement"] == "Alice's secret plan is kiwi." and mine.revision == 1
    for op in ("audit/query", "export"):
        body = call(intruder, op, {"limit": 100}, "read").json()["data"]
        assert "kiwi" not in str(body)


# --- reads never leak ---------------------------------------------------------------------------


def test_masked_and_metadata_only_views_leak_nothing(runtime):
    """Reference bug 1: masked search items carried the raw statement in consumable_text."""
    written(runtime, memory(statement="Alice's PIN is papaya-4411", sensitivity="confidential"))
    written(runtime, memory(statement="Alice's passport is papaya-9922", sensitivity="restricted"))
    response = call(runtime, "search", {"query": "papaya", "limit": 10}, "search")
    items = response.json()["data"]["results"]
    assert {item["return_mode"] for item in items} == {"masked", "metadata_only"}
    assert "papaya" not in str(items)
    for item in items:
        assert item["matched_terms"] == [] and item["memory"]["evidence_refs"] == []
        assert item["memory"]["extensions"] == {} and item["memory"]["source"]["ref"] == "***"


def test_a_raw_item_explains_its_score_by_signal(runtime):
    written(runtime, memory(statement="Alice drinks green tea every morning."))
    (item,) = call(runtime, "search", {"query": "green tea", "limit": 5}, "search").json()["data"]["results"]
    assert item["return_mode"] == "raw"
    assert item["explanation"].startswith("lexical 1.000")  # each signal that contributed, by name


# --- the lifecycle is a state machine ------------------------------------------------------------


def test_a_tombstone_never_comes_back(runtime):
    """Reference bugs 2 and 3: expire after delete, or an upsert, resurrected a deleted memory."""
    mem = memory("mem_tomb", statement="Alice's old address is 1 Elm St.")
    written(runtime, mem)
    assert verb(runtime, "delete", "mem_tomb")["state"] == "deleted"
    assert _error(call(runtime, "expire", {"memory_id": "mem_tomb"}, "expire")) == "MGP_CONFLICT_UNRESOLVED"
    upsert = call(runtime, "write", {"memory": mem, "merge_hint": {"strategy": "upsert"}}, "write")
    assert _error(upsert) == "MGP_CONFLICT_UNRESOLVED"
    update = call(
        runtime, "update", {"memory_id": "mem_tomb", "patch": {"content": {"theme": "x"}}}, "update"
    )
    assert update.status_code == 403
    get = call(runtime, "get", {"memory_id": "mem_tomb"}, "read").json()["data"]
    assert get["return_mode"] == "metadata_only" and get["memory"]["backend_ref"]["mgp_state"] == "deleted"
    assert "Elm" not in str(get)
    assert Memory.objects.get().state == Memory.State.DELETED


def test_memory_id_is_immutable(runtime):
    """Reference bug 4: update could rename a memory, after which get answered 404."""
    written(runtime, memory("mem_fixed"))
    patch = {"memory_id": "mem_renamed", "content": {"theme": "light"}}
    response = call(runtime, "update", {"memory_id": "mem_fixed", "patch": patch}, "update")
    assert response.status_code == 400 and _error(response) == "MGP_INVALID_OBJECT"


def test_purge_frees_the_id_and_keeps_the_audit(runtime):
    written(runtime, memory("mem_gone", statement="Alice's marker zebra-77."))
    assert verb(runtime, "purge", "mem_gone")["state"] == "purged"
    assert call(runtime, "get", {"memory_id": "mem_gone"}, "read").status_code == 404
    assert not Memory.objects.exists()
    events = call(runtime, "audit/query", {"limit": 100}, "read").json()["data"]["events"]
    assert {"write", "delete", "purge"} <= {event["action"] for event in events}
    written(runtime, memory("mem_gone"))  # the id is free again


# --- bad input is an MGP error, never a framework body -------------------------------------------


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b'"text"', b""])
def test_malformed_bodies_are_invalid_objects(runtime, raw):
    """Reference bug 8: malformed JSON answered 422 with a framework body."""
    response = runtime.client.post("/mgp/write", raw, content_type="application/json")
    assert response.status_code == 400 and _error(response) == "MGP_INVALID_OBJECT"


def test_a_forged_pagination_token_is_an_invalid_object(runtime):
    for op, payload in [
        ("audit/query", {"pagination_token": "abc"}),
        ("search", {"query": "x", "pagination_token": "zz"}),
    ]:
        response = call(runtime, op, payload, "read" if op != "search" else "search")
        assert response.status_code == 400 and _error(response) == "MGP_INVALID_OBJECT"


def test_a_requested_action_that_does_not_match_the_operation_is_refused(runtime):
    response = call(runtime, "write", {"memory": memory()}, "read")
    assert response.status_code == 400 and _error(response) == "MGP_INVALID_OBJECT"


# --- every decision is audited, in this tenant only --------------------------------------------


def test_refusals_are_audited_too(runtime, intruder):
    """Reference bug 7: denials, 404s, conflicts and validation errors left no audit event."""
    written(runtime, memory("mem_audit"))
    conflict = call(runtime, "write", {"memory": memory("mem_audit")}, "write", correlation_id="trace-7")
    assert conflict.status_code == 409
    assert call(runtime, "get", {"memory_id": "nope"}, "read", correlation_id="trace-7").status_code == 404
    assert (
        call(runtime, "write", {"memory": {"memory_id": "x"}}, "write", correlation_id="trace-7").status_code
        == 400
    )
    foreign = call(
        runtime, "get", {"memory_id": "x"}, "read", tenant_id=intruder.tenant.name, correlation_id="trace-7"
    )
    assert foreign.status_code == 403
    events = call(runtime, "audit/query", {"correlation_id": "trace-7"}, "read").json()["data"]["events"]
    assert [(e["action"], e["decision"]["decision"], e["decision"]["reason_code"]) for e in events] == [
        ("write", "deny", "MGP_CONFLICT_UNRESOLVED"),
        ("read", "deny", "MGP_MEMORY_NOT_FOUND"),
        ("write", "deny", "MGP_INVALID_OBJECT"),
        ("read", "deny", "MGP_POLICY_DENIED"),
    ]
    assert "alice" not in str(events)  # subject ids only as keyed digests in read and refusal events
    assert call(intruder, "audit/query", {"limit": 500}, "read").json()["data"]["events"] == []


def test_export_and_sync_serve_this_tenant_in_the_read_policy_view(runtime, intruder):
    """Reference bug 6: export and sync returned other tenants' restricted memories raw."""
    written(
        runtime, memory("mem_secret", statement="Alice's vault code is lemon-31", sensitivity="restricted")
    )
    for op, payload in [("export", {"limit": 10}), ("sync", {"limit": 10})]:
        mine = call(runtime, op, payload, "read").json()["data"]["memories"]
        assert [m["backend_ref"]["policy_view"] for m in mine] == ["metadata_only"] and "lemon" not in str(
            mine
        )
        assert call(intruder, op, payload, "read").json()["data"]["memories"] == []


def test_search_costs_the_same_queries_whatever_the_tenant_size(runtime, django_assert_max_num_queries):
    """Reference bug 9: every search serialised and scanned every memory."""
    written(runtime, memory(statement="Alice likes green tea."))

    def count() -> int:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as queries:
            assert call(runtime, "search", {"query": "green tea", "limit": 5}, "search").status_code == 200
        return len(queries)

    small = count()
    for n in range(12):
        written(runtime, memory(statement=f"Alice likes green tea number {n}."))
    assert count() <= small + 2


def test_schemas_are_compiled_once():
    """Reference bug 10: each validation re-read and recompiled its schema."""
    from mgp.validation import validator

    assert validator("memory-object.schema.json") is validator("memory-object.schema.json")


def test_a_retried_request_answers_as_the_first_time(runtime):
    context = {
        "actor_agent": runtime.agent.name,
        "acting_for_subject": {"kind": "user", "id": "alice"},
        "requested_action": "write",
    }
    body = {"request_id": "req-retry", "policy_context": context}
    second = {**body, "payload": {"memory": memory("mem_retry_2")}}
    assert runtime.client.post("/mgp/write", second, format="json").status_code == 202
    settle(runtime.client.post("/mgp/write", second, format="json"))
    again = runtime.client.post("/mgp/write", second, format="json")
    assert again.status_code == 200 and again.json()["data"]["memory"]["memory_id"] == "mem_retry_2"
    assert again.json()["data"]["resolution"] == "created"
    other = {**body, "payload": {"memory": memory("mem_retry_3")}}
    assert runtime.client.post("/mgp/write", other, format="json").json()["error"]["code"] == (
        "MGP_CONFLICT_UNRESOLVED"
    )  # the same request_id for another request


def test_a_memory_proposed_over_rest_is_named_by_its_custodian_id(runtime, applied_memory_factory):
    from tenancy.services import grant_delegation

    grant_delegation(agent=runtime.agent, subject={"kind": "user", "id": "pm-alice"}, reason="test")
    mem = applied_memory_factory(runtime)
    itself = {"kind": "agent", "id": runtime.agent.name}
    got = call(runtime, "get", {"memory_id": str(mem.pk)}, "read", subject=itself)
    assert got.status_code == 200, got.json()
    assert got.json()["data"]["memory"]["backend_ref"]["custodian_memory_id"] == str(mem.pk)


@pytest.mark.parametrize(
    "op",
    [
        "write",
        "write/batch",
        "search",
        "get",
        "update",
        "expire",
        "revoke",
        "delete",
        "purge",
        "audit/query",
        "export",
        "import",
        "sync",
        "tasks/get",
        "tasks/cancel",
        "initialize",
    ],
)
@pytest.mark.parametrize(
    "body",
    [
        {},
        {"request_id": ""},
        {"request_id": "r", "policy_context": None, "payload": None},
        {"request_id": "r", "policy_context": {"actor_agent": 1}, "payload": {"memory_id": ["x"]}},
        {"request_id": "r", "task_id": "not-a-uuid"},
        {"request_id": "r", "payload": {"limit": 10**30, "pagination_token": "-1"}, "extra": True},
    ],
)
def test_bad_bodies_are_mgp_errors_never_a_500(runtime, op, body):
    response = runtime.client.post(f"/mgp/{op}", body, format="json")
    assert response.status_code in (400, 403, 404, 501), response.content
    assert response.json()["status"] == "error" and response.json()["error"]["code"].startswith("MGP_")


def test_open_mgp_content_round_trips(runtime):
    content = {"value": "high", "fact": "tea", "nested_ok": 3, "statement": "Alice rates tea high."}
    written(runtime, memory("mem_open", type="semantic_fact", content=content))
    got = call(runtime, "get", {"memory_id": "mem_open"}, "read").json()["data"]["memory"]
    assert got["content"] == content
    bare = {"favorite_color": "blue"}
    written(runtime, memory("mem_bare", type="profile", content=bare))
    assert call(runtime, "get", {"memory_id": "mem_bare"}, "read").json()["data"]["memory"]["content"] == bare


def test_a_masked_memory_keeps_its_field_names_and_nothing_else(runtime):
    written(
        runtime,
        memory(
            "mem_masked",
            type="profile",
            content={"secret": "visible-text", "pin": 4411},
            sensitivity="confidential",
        ),
    )
    data = call(runtime, "get", {"memory_id": "mem_masked"}, "read").json()["data"]
    assert data["return_mode"] == "masked"
    assert data["memory"]["content"] == {"secret": "***", "pin": 4411}  # numbers kept, as MGP masks
    assert "visible" not in str(data)
