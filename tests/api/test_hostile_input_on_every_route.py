"""Every REST route refuses hostile bodies and query values as problem+json 4xx, storing nothing.

The routes come from our own OpenAPI schema, so a new one is covered without a line here; path
parameters point at objects that exist in the agent's tenant, so detail routes are tested past
their 404.
"""

import json
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from django.conf import settings

from executor.models import Receipt
from memory_core.models import Memory
from tests.factories import (
    AgentHandle,
    apply_released,
    create_payload,
    factor_fact,
    make_agent,
    make_evidence,
    submit,
    user_preference,
)
from tests.shared_rows import shared_rows

PROBLEM = "application/problem+json"


def _rest_operations() -> list[tuple[str, str, list[str], bool]]:
    """(method, path template, query parameter names, takes a body) of each operation in our schema."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        (
            method.upper(),
            path,
            [p["name"] for p in op.get("parameters", []) if p["in"] == "query"],
            "requestBody" in op,
        )
        for path, operations in schema["paths"].items()
        for method, op in operations.items()
        if path.startswith("/api/v1/")
    ]


REST_OPERATIONS = _rest_operations()
# (A write that takes no body, like withdraw, never reads one: there is nothing to refuse.)
REST_WRITES = [(method, path) for method, path, _, body in REST_OPERATIONS if body]
REST_QUERIES = [
    (path, name) for method, path, names, _ in REST_OPERATIONS if method == "GET" for name in names
]
# Refused for who asks before the body is read: an agent may not invalidate evidence by default.
REFUSED_BEFORE_THE_BODY = {
    "/api/v1/evidence/{evidence_id}/revisions/{revision}/invalidate/": "permission_denied"
}

# Bare tokens where a client would put a value: each must be refused by the parser itself.
HOSTILE_BODIES = {
    "deep nesting": "[" * 100_000 + "]" * 100_000,
    "NUL": '{"text": "a\\u0000b", "reason": "a\\u0000b"}',
    "NUL in a key": '{"a\\u0000": 1}',
    "lone surrogate": '{"text": "\\ud800", "reason": "\\udfff"}',
    "lone surrogate key": '{"\\ud800": 1}',
    "10**400": '{"revision": 1' + "0" * 400 + "}",
    "2**63": '{"revision": 9223372036854775808}',
    "1e16": '{"revision": 1e16, "confidence": 1e16}',
    "1e400": '{"confidence": 1e400}',
    "NaN": '{"confidence": NaN}',
    "Infinity": '{"confidence": Infinity}',
    "-Infinity": '{"confidence": -Infinity}',
}
HOSTILE_QUERY_VALUES = {
    "NUL": "a\x00b",
    "lone surrogate bytes": "%ED%A0%80",
    "invalid UTF-8": "%FF%FE",
    "10**400": "1" + "0" * 400,
    "-2**63": str(-(2**63)),
    "1e400": "1e400",
    "NaN": "NaN",
    "over-long": "x" * 20_000,
}


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker) -> Iterator[tuple[AgentHandle, dict]]:
    """An agent and ids of objects in its tenant for every path parameter the API has.

    Made once for the module: every test here only sends requests that must be refused or read,
    and rolls back whatever it wrote.
    """
    with shared_rows(django_db_blocker):
        agent = make_agent("quant-desk", "research-agent")
        evidence = make_evidence(agent.agent)
        applied = submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
        assert apply_released(applied).outcome == "applied"
        proposal = submit(agent.agent, create_payload(factor_fact(), [evidence]))
        recall = agent.client.post("/api/v1/recall/search", {"query": "weekly"}, format="json")
        assert recall.status_code == 200, recall.content
        receipt = Receipt.objects.filter(tenant=agent.tenant).values_list("pk", flat=True)[0]
        ids = {
            "evidence_id": str(evidence.source_id),
            "revision": str(evidence.revision),
            "proposal_id": str(proposal.pk),
            "memory_id": str(Memory.objects.get(pk=applied.target_id).pk),
            "receipt_id": str(receipt),
            "recall_id": recall.json()["recall_id"],
        }
        yield agent, ids


def _url(path: str, ids: dict) -> str:
    return path.format(**ids)


def _stored_rows() -> dict:
    """Row counts of every table a write through the REST API can add to."""
    from django.apps import apps

    return {
        model._meta.label: model.objects.count()
        for model in apps.get_models()
        if model._meta.app_label in ("evidence", "memory_core", "proposals", "reviews", "executor")
        and not model._meta.label.endswith(("AccessEvent", "AccessEventItem"))  # reads are audited
        and model._meta.managed
    }


def _client_for(path: str, agent):
    """The agent's client, or a reviewer's session for the reviewer-only endpoints (to get past 403)."""
    from rest_framework.test import APIClient

    from tests.factories import make_person

    if not path.endswith(("/decisions/", "/reviews/queue/")):
        return agent.client
    client = APIClient()
    client.force_login(make_person("hostile-reviewer", agent.tenant))
    return client


def assert_problem(response) -> dict:
    assert response.status_code < 500, response.content[:500]
    assert 400 <= response.status_code < 500, response.content[:500]
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert isinstance(body["code"], str) and body["code"] and body["status"] == response.status_code
    return body


@pytest.mark.parametrize("raw", HOSTILE_BODIES.values(), ids=HOSTILE_BODIES.keys())
@pytest.mark.parametrize(("method", "path"), REST_WRITES, ids=[f"{m} {p}" for m, p in REST_WRITES])
def test_every_rest_write_refuses_a_hostile_body_and_stores_nothing(db, world, method, path, raw):
    agent, rest_ids = world
    client = _client_for(path, agent)
    before = _stored_rows()
    response = client.generic(
        method,
        _url(path, rest_ids),
        data=raw.encode(),
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="k",
    )
    assert assert_problem(response)["code"] == REFUSED_BEFORE_THE_BODY.get(path, "malformed_json")
    assert _stored_rows() == before


@pytest.mark.parametrize(("method", "path"), REST_WRITES, ids=[f"{m} {p}" for m, p in REST_WRITES])
def test_every_rest_write_refuses_an_over_long_body_and_stores_nothing(db, world, method, path):
    agent, rest_ids = world
    client = _client_for(path, agent)
    before = _stored_rows()
    raw = json.dumps({"text": "x" * (settings.CUSTODIAN_MAX_BATCH_BODY_BYTES + 1)})
    response = client.generic(
        method,
        _url(path, rest_ids),
        data=raw.encode(),
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="k",
    )
    assert assert_problem(response)["code"] == REFUSED_BEFORE_THE_BODY.get(path, "payload_too_large")
    assert _stored_rows() == before


@pytest.mark.parametrize("value", HOSTILE_QUERY_VALUES.values(), ids=HOSTILE_QUERY_VALUES.keys())
@pytest.mark.parametrize(("path", "name"), REST_QUERIES, ids=[f"{p}?{n}" for p, n in REST_QUERIES])
def test_every_rest_query_parameter_answers_hostile_values_without_a_server_error(
    db, world, path, name, value
):
    agent, rest_ids = world
    client = _client_for(path, agent)
    encoded = value if value.startswith("%") else quote(value, safe="")
    response = client.get(f"{_url(path, rest_ids)}?{name}={encoded}")
    if response.status_code >= 400:
        assert_problem(response)
    else:
        assert response.status_code == 200, response.content[:500]
