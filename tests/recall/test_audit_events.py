"""The audit query: tenant-scoped, filterable, every outcome included, constant query count."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviews.selectors import AUDIT
from tests.factories import make_person
from tests.reviews.test_review_api import person_client


def _read(api, memory_id, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return api.get(f"/api/v1/memories/{memory_id}/?{query}")


def test_agents_see_their_tenants_reads_including_denied_and_missing(api, remember, other_agent):
    memory = remember("read me", sensitivity="restricted")
    _read(api, memory.id, correlation_id="c1")
    _read(api, memory.id, data_zone="external")
    _read(api, "00000000-0000-4000-8000-000000000000")
    _read(other_agent.client, memory.id)  # another tenant: not found there, audited there
    events = api.get("/api/v1/audit/events/").json()["results"]
    assert sorted(e["outcome"] for e in events) == ["denied", "not_found", "ok"]
    by_memory = api.get(f"/api/v1/audit/events/?memory={memory.id}").json()["results"]
    assert len(by_memory) == 2
    assert [
        e["correlation_id"] for e in api.get("/api/v1/audit/events/?correlation_id=c1").json()["results"]
    ] == ["c1"]


def test_auditors_read_the_audit_trail_of_their_tenant_only(agent, api, remember, other_agent):
    remember("audited by people")
    api.post("/api/v1/recall/search", {"query": "audited"}, format="json")
    other_agent.client.post("/api/v1/recall/search", {"query": "x"}, format="json")
    auditor = make_person("aud", agent.tenant, AUDIT)
    events = person_client(auditor).get("/api/v1/audit/events/?action=search").json()["results"]
    assert [e["query"] for e in events] == ["audited"]
    assert events[0]["items"][0]["mode"] == "raw"


def test_audit_list_query_count_is_constant(api, remember):
    memory = remember("counted")
    _read(api, memory.id)
    with CaptureQueriesContext(connection) as few:
        api.get("/api/v1/audit/events/")
    for _ in range(10):
        _read(api, memory.id)
        api.post("/api/v1/recall/search", {"query": "counted"}, format="json")
    with CaptureQueriesContext(connection) as many:
        api.get("/api/v1/audit/events/")
    assert len(many) == len(few)
