"""Hostile and malformed requests are refused as problem+json with a stable code, storing nothing."""

import base64
import json

import pytest
from django.conf import settings

from evidence.models import EvidenceSource
from proposals.models import Proposal
from tenancy.services import revoke_agent_tokens
from tests.factories import create_payload, make_evidence, user_preference

PROPOSALS = "/api/v1/proposals/"
PROBLEM = "application/problem+json"


def _post_raw(client, raw: bytes | str, url: str = PROPOSALS, content_type: str = "application/json"):
    if isinstance(raw, str):
        raw = raw.encode()
    return client.generic("POST", url, data=raw, content_type=content_type, HTTP_IDEMPOTENCY_KEY="k")


def _post(client, payload: dict):
    return client.post(PROPOSALS, payload, format="json", HTTP_IDEMPOTENCY_KEY="k")


def _with_placeholder(payload: dict, placeholder: str, literal: str) -> str:
    """Serialise ``payload`` and splice ``literal`` raw JSON text where ``placeholder`` was."""
    text = json.dumps(payload)
    assert f'"{placeholder}"' in text
    return text.replace(f'"{placeholder}"', literal)


def _valid_payload(agent, **memory_overrides) -> dict:
    return create_payload(user_preference(**memory_overrides), [make_evidence(agent.agent)])


def _content(**fields) -> dict:
    return {"statement": "Alice prefers weekly summaries", **fields}


def assert_refused(response, status: int, code: str) -> dict:
    """The response is a problem+json refusal with ``code`` and no proposal was stored."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["code"] == code
    assert body["status"] == status
    assert Proposal.objects.count() == 0
    return body


# --- Bodies the parser must refuse --------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b'{"action": "create",',
        b"{'action': 'create'}",
        b'{"action": "create"} trailing',
        b"   ",
        b"\xef\xbb\xbf{}",
    ],
    ids=["truncated", "single-quotes", "trailing-garbage", "whitespace", "utf8-bom"],
)
def test_malformed_json_is_refused(api, raw):
    assert_refused(_post_raw(api, raw), 400, "malformed_json")


def test_empty_body_is_refused_as_missing_fields(api):
    body = assert_refused(_post_raw(api, b""), 400, "validation_error")
    assert "action" in body["errors"]


def test_invalid_utf8_bytes_are_refused(api):
    assert_refused(
        _post_raw(api, b'{"action": "create", "rationale": "\xff\xfe\xc3"}'), 400, "malformed_json"
    )


def test_body_over_the_size_limit_is_refused_as_too_large(api):
    filler = "x" * settings.CUSTODIAN_MAX_BODY_BYTES
    assert_refused(_post_raw(api, json.dumps({"rationale": filler})), 413, "payload_too_large")


def test_body_over_djangos_upload_limit_is_refused_as_too_large(api):
    filler = "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    assert_refused(_post_raw(api, json.dumps({"rationale": filler})), 413, "payload_too_large")


def test_json_nested_deeper_than_the_limit_is_refused(agent, api):
    nested = "__deep__"
    for _ in range(settings.CUSTODIAN_MAX_JSON_DEPTH + 1):
        nested = {"level": nested}
    payload = _valid_payload(agent, content=_content(preference_value=nested))
    body = assert_refused(_post(api, payload), 400, "malformed_json")
    assert str(settings.CUSTODIAN_MAX_JSON_DEPTH) in body["detail"]


def test_pathologically_deep_json_does_not_exhaust_the_stack(api):
    depth = 100_000
    assert_refused(_post_raw(api, "[" * depth + "]" * depth), 400, "malformed_json")


def test_nul_byte_in_statement_is_refused(agent, api):
    payload = _valid_payload(agent, content=_content(statement="weekly\u0000summaries"))
    assert "\\u0000" in json.dumps(payload)
    assert_refused(_post(api, payload), 400, "malformed_json")


def test_nul_byte_in_key_is_refused(agent, api):
    payload = _valid_payload(agent, content=_content(**{"pref\u0000erence": "weekly"}))
    assert_refused(_post(api, payload), 400, "malformed_json")


def test_nul_byte_in_rationale_is_refused(agent, api):
    payload = _valid_payload(agent) | {"rationale": "\u0000"}
    assert_refused(_post(api, payload), 400, "malformed_json")


@pytest.mark.parametrize(
    "literal",
    [str(2**53), str(2**53 + 1), str(-(2**53)), "1" + "0" * 400],
    ids=["2**53", "2**53+1", "-2**53", "googol**4"],
)
def test_integer_beyond_the_safe_range_in_content_is_refused(agent, api, literal):
    raw = _with_placeholder(
        _valid_payload(agent, content=_content(preference_value="__N__")), "__N__", literal
    )
    assert_refused(_post_raw(api, raw), 400, "malformed_json")


@pytest.mark.parametrize("literal", ["1e400", "-1e400", "NaN", "Infinity", "-Infinity"])
def test_non_finite_number_in_content_is_refused(agent, api, literal):
    raw = _with_placeholder(
        _valid_payload(agent, content=_content(preference_value="__N__")), "__N__", literal
    )
    assert_refused(_post_raw(api, raw), 400, "malformed_json")


def test_largest_safe_integer_in_content_is_accepted(agent, api):
    raw = _with_placeholder(
        _valid_payload(agent, content=_content(preference_value="__N__")), "__N__", str(2**53 - 1)
    )
    response = _post_raw(api, raw)
    assert response.status_code == 201, response.content
    assert response.json()["fields"]["content"]["preference_value"] == 2**53 - 1


@pytest.mark.parametrize("literal", ['"\\ud800"', '"tail \\udfff"'], ids=["high", "low"])
def test_lone_surrogate_in_memory_content_is_refused(agent, api, literal):
    raw = _with_placeholder(_valid_payload(agent, content=_content(statement="__S__")), "__S__", literal)
    assert_refused(_post_raw(api, raw), 400, "malformed_json")


def test_lone_surrogate_in_evidence_content_key_is_refused(api):
    raw = '{"kind": "backtest_run", "external_ref": "run-1", "content": {"\\ud800": 1}}'
    assert_refused(_post_raw(api, raw, url="/api/v1/evidence/"), 400, "malformed_json")
    assert not EvidenceSource.objects.exists()


def test_nul_byte_in_evidence_content_is_refused(api):
    raw = json.dumps({"kind": "backtest_run", "external_ref": "run-1", "content": {"note": "a\u0000b"}})
    assert_refused(_post_raw(api, raw, url="/api/v1/evidence/"), 400, "malformed_json")
    assert not EvidenceSource.objects.exists()


def test_huge_integer_in_evidence_content_is_refused(api):
    raw = json.dumps({"kind": "backtest_run", "external_ref": "run-1", "content": {"n": "__N__"}})
    raw = raw.replace('"__N__"', str(2**64))
    assert_refused(_post_raw(api, raw, url="/api/v1/evidence/"), 400, "malformed_json")
    assert not EvidenceSource.objects.exists()


# --- Bodies the serializers must refuse ---------------------------------------------------------


def test_unknown_top_level_field_is_refused(agent, api):
    payload = _valid_payload(agent) | {"force_apply": True}
    body = assert_refused(_post(api, payload), 400, "validation_error")
    assert "force_apply" in body["errors"]


def test_unknown_nested_memory_field_is_refused(agent, api):
    payload = _valid_payload(agent, colour="blue")
    body = assert_refused(_post(api, payload), 400, "validation_error")
    assert "colour" in body["errors"]["memory"]


def test_unknown_field_in_typed_content_is_refused(agent, api):
    payload = _valid_payload(agent, content=_content(colour="blue"))
    assert_refused(_post(api, payload), 422, "content_invalid")


def test_confidence_given_as_a_word_is_refused(agent, api):
    payload = _valid_payload(agent, confidence="high")
    body = assert_refused(_post(api, payload), 400, "validation_error")
    assert "confidence" in body["errors"]["memory"]


@pytest.mark.parametrize("revision", [-1, 0, 2**40, "one", 1.5], ids=["-1", "0", "2**40", "word", "float"])
def test_invalid_evidence_revision_is_refused(agent, api, revision):
    payload = _valid_payload(agent)
    payload["evidence"][0]["revision"] = revision
    body = assert_refused(_post(api, payload), 400, "validation_error")
    assert "revision" in body["errors"]["evidence"]["0"]


def test_missing_statement_is_refused(agent, api):
    payload = _valid_payload(agent, content={"preference_key": "summary_cadence"})
    body = assert_refused(_post(api, payload), 422, "content_invalid")
    assert "statement" in json.dumps(body["errors"])


@pytest.mark.parametrize("statement", ["", "   ", "\t\n"], ids=["empty", "spaces", "whitespace"])
def test_blank_statement_is_refused(agent, api, statement):
    payload = _valid_payload(agent, content=_content(statement=statement))
    body = assert_refused(_post(api, payload), 422, "content_invalid")
    assert "statement" in json.dumps(body["errors"])


@pytest.mark.parametrize("statement", [42, 4.2, True, None, ["a"], {"a": 1}])
def test_statement_that_is_not_a_string_is_refused(agent, api, statement):
    payload = _valid_payload(agent, content=_content(statement=statement))
    assert_refused(_post(api, payload), 422, "content_invalid")


@pytest.mark.parametrize("memory_type", ["preference", "episodic"])
def test_content_that_is_not_an_object_is_refused(agent, api, memory_type):
    payload = _valid_payload(agent, type=memory_type, content=["Alice prefers weekly summaries"])
    assert_refused(_post(api, payload), 400, "validation_error")


def test_body_that_is_not_an_object_is_refused(api):
    assert_refused(_post_raw(api, "[]"), 400, "validation_error")


def test_update_without_base_revision_is_refused(agent, api):
    payload = {
        "action": "update",
        "memory_id": "00000000-0000-4000-8000-000000000000",
        "changes": {"confidence": 0.5},
        "evidence": [make_evidence(agent.agent).binding()],
    }
    body = assert_refused(_post(api, payload), 400, "validation_error")
    assert "base_revision" in body["errors"]


def test_create_with_memory_id_is_refused(agent, api):
    payload = _valid_payload(agent) | {"memory_id": "00000000-0000-4000-8000-000000000000"}
    body = assert_refused(_post(api, payload), 400, "validation_error")
    assert "memory_id" in body["errors"]


def test_unknown_action_is_refused(agent, api):
    payload = _valid_payload(agent) | {"action": "delete_everything"}
    body = assert_refused(_post(api, payload), 400, "validation_error")
    assert "action" in body["errors"]


@pytest.mark.parametrize(
    ("content_type", "raw"),
    [
        ("text/plain", '{"action": "create"}'),
        ("application/x-www-form-urlencoded", "action=create"),
        ("multipart/form-data; boundary=xyz", "--xyz--"),
        ("application/xml", "<proposal/>"),
    ],
)
def test_non_json_content_type_is_refused(api, content_type, raw):
    assert_refused(_post_raw(api, raw, content_type=content_type), 415, "unsupported_media_type")


def test_missing_idempotency_key_is_refused(agent, api):
    response = api.post(PROPOSALS, _valid_payload(agent), format="json")
    assert_refused(response, 400, "idempotency_key_required")


@pytest.mark.parametrize("key", ["k\u0000", "k" * 201, "tab\tkey"], ids=["nul", "too-long", "control"])
def test_unprintable_or_oversized_idempotency_key_is_refused(agent, api, key):
    response = api.post(PROPOSALS, _valid_payload(agent), format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert_refused(response, 400, "idempotency_key_required")


# --- Authentication, methods, query strings -----------------------------------------------------


def test_missing_bearer_token_is_refused(agent, anonymous):
    response = anonymous.post(PROPOSALS, _valid_payload(agent), format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert_refused(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "header",
    ["Bearer garbage", "Bearer cst_" + "A" * 43, "Bearer", "Bearer two tokens", "Bearer caf\u00e9"],
    ids=["garbage", "well-formed-unknown", "no-token", "two-tokens", "non-ascii"],
)
def test_garbage_bearer_token_is_refused(agent, anonymous, header):
    anonymous.credentials(HTTP_AUTHORIZATION=header)
    response = anonymous.post(PROPOSALS, _valid_payload(agent), format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert_refused(response, 401, "not_authenticated")


def test_revoked_bearer_token_is_refused(agent, api):
    assert api.get(PROPOSALS).status_code == 200
    assert revoke_agent_tokens(tenant=agent.tenant, agent_name=agent.agent.name) == 1
    assert_refused(api.get(PROPOSALS), 401, "not_authenticated")
    response = _post(api, _valid_payload(agent))
    assert_refused(response, 401, "not_authenticated")


@pytest.mark.parametrize(
    "url",
    ["/api/v1/receipts/", "/api/v1/proposals/00000000-0000-4000-8000-000000000000/"],
)
def test_post_to_a_read_only_url_is_refused(api, url):
    response = api.post(url, {}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert_refused(response, 405, "method_not_allowed")


def test_delete_on_the_proposal_collection_is_refused(api):
    assert_refused(api.delete(PROPOSALS), 405, "method_not_allowed")


@pytest.mark.parametrize("query", ["status=nonsense", "classification=nonsense"])
def test_unknown_filter_value_is_refused(api, query):
    body = assert_refused(api.get(f"{PROPOSALS}?{query}"), 400, "validation_error")
    assert query.split("=")[0] in body["errors"]


def _cursor(query: str) -> str:
    return base64.b64encode(query.encode()).decode()


@pytest.mark.parametrize("cursor", ["not-a-cursor", "%ff%fe", _cursor("o=-5")])
def test_invalid_cursor_is_refused(api, cursor):
    assert_refused(api.get(f"{PROPOSALS}?cursor={cursor}"), 400, "invalid_cursor")


@pytest.mark.parametrize("position", ["2024", "yesterday", "\u0000"], ids=["year", "word", "nul"])
def test_forged_cursor_position_is_refused_as_invalid_cursor(api, position):
    response = api.get(f"{PROPOSALS}?cursor={_cursor(f'p={position}')}")
    assert_refused(response, 400, "invalid_cursor")


# --- Injection strings are data -----------------------------------------------------------------

INJECTIONS = [
    "'; DROP TABLE proposals_proposal; --",
    "Robert'); DELETE FROM executor_receipt WHERE ('1'='1",
    '<script>alert("x")</script>',
    "<img src=x onerror=alert(1)>",
    '"}], "action": "delete", "x": [{"',
    "{{ settings.SECRET_KEY }} ${jndi:ldap://x}",
]


@pytest.mark.parametrize("text", INJECTIONS)
def test_injection_strings_are_stored_verbatim_and_returned_json_escaped(agent, api, text):
    payload = _valid_payload(agent, content=_content(statement=f"Alice says {text}"))
    payload["rationale"] = text
    response = _post(api, payload)
    assert response.status_code == 201, response.content
    assert response["Content-Type"] == "application/json"
    assert response["X-Content-Type-Options"] == "nosniff"
    body = response.json()
    assert body["rationale"] == text
    assert body["fields"]["content"]["statement"] == f"Alice says {text}"
    assert json.dumps(text, ensure_ascii=False)[1:-1] in response.content.decode()
    stored = Proposal.objects.get()
    assert stored.rationale == text
    assert stored.fields["content"]["statement"] == f"Alice says {text}"
    detail = api.get(f"{PROPOSALS}{stored.id}/")
    assert detail.status_code == 200
    assert detail.json()["rationale"] == text


# --- Every REST route: hostile bodies and query strings -----------------------------------------


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


@pytest.fixture
def rest_ids(agent, applied_memory_factory):
    """Ids of objects in the agent's tenant for every path parameter the API has."""
    from executor.models import Receipt
    from tests.factories import create_payload, factor_fact, submit

    memory = applied_memory_factory(agent)
    evidence = make_evidence(agent.agent)
    proposal = submit(agent.agent, create_payload(factor_fact(), [evidence]))
    recall = agent.client.post("/api/v1/recall/search", {"query": "weekly"}, format="json")
    assert recall.status_code == 200, recall.content
    return {
        "evidence_id": str(evidence.source_id),
        "revision": str(evidence.revision),
        "proposal_id": str(proposal.pk),
        "memory_id": str(memory.pk),
        "receipt_id": str(Receipt.objects.filter(tenant=agent.tenant).values_list("pk", flat=True)[0]),
        "recall_id": recall.json()["recall_id"],
    }


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
def test_every_rest_write_refuses_a_hostile_body_and_stores_nothing(agent, rest_ids, method, path, raw):
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
def test_every_rest_write_refuses_an_over_long_body_and_stores_nothing(agent, rest_ids, method, path):
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
    agent, rest_ids, path, name, value
):
    from urllib.parse import quote

    client = _client_for(path, agent)
    encoded = value if value.startswith("%") else quote(value, safe="")
    response = client.get(f"{_url(path, rest_ids)}?{name}={encoded}")
    if response.status_code >= 400:
        assert_problem(response)
    else:
        assert response.status_code == 200, response.content[:500]
