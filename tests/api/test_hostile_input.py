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
