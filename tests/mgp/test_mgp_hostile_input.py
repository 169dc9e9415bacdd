"""Hostile bodies on every MGP operation: a clean ``MGP_INVALID_OBJECT``, never a 5xx, never retryable.

The same strict JSON rules as REST (depth, NUL, lone surrogates, I-JSON
numbers, size) plus MGP's own bound on ``request_id``. Each body is sent
as raw bytes, so what the parser sees is exactly what an attacker sends.
"""

import json

import pytest

from memory_core.models import Memory
from mgp.models import MgpRecord, MgpTask
from mgp.views import OPERATIONS
from proposals.models import Proposal
from tests.mgp.conftest import context, memory

pytestmark = pytest.mark.django_db

HOLE = "__hostile__"
# Raw JSON that replaces the placeholder string (quotes included) in an otherwise valid body.
VALUES = {
    "deep-nesting": "[" * 10_000 + "]" * 10_000,
    "lone-surrogate": '"\\ud800"',
    "nul": '"a\\u0000b"',
    "int-2-63": str(2**63),
    "int-10-400": "1" + "0" * 400,
    "float-1e400": "1e400",
    "int-2-53": str(2**53 - 1),
    "float-1e16": "1e16",
    "nan": "NaN",
    "infinity": "-Infinity",
}


def _payload(op: str, handle) -> dict:
    """A body each operation would accept, before anything hostile goes in."""
    return {
        "write": {"memory": memory()},
        "write/batch": {"items": [{"memory": memory()}]},
        "search": {"query": "dark mode", "limit": 5},
        "get": {"memory_id": "mem_x"},
        "update": {"memory_id": "mem_x", "patch": {"content": {"note": "n"}}},
        "expire": {"memory_id": "mem_x"},
        "revoke": {"memory_id": "mem_x"},
        "delete": {"memory_id": "mem_x"},
        "purge": {"memory_id": "mem_x"},
        "audit/query": {"limit": 5},
        "export": {"limit": 5},
        "import": {"memories": [memory()]},
        "sync": {"limit": 5},
    }[op]


ACTIONS = {"write/batch": "write", "import": "write", "get": "read", "export": "read", "sync": "read"}
ACTIONS |= {"audit/query": "read"}
ALL = ["initialize", *OPERATIONS]


def _body(op: str, handle, request_id: str = "req_hostile") -> dict:
    if op == "initialize":
        return {
            "request_id": request_id,
            "client": {"name": "c", "version": "1"},
            "protocol_version": "0.1.1",
        }
    if op in ("tasks/get", "tasks/cancel"):
        return {"request_id": request_id, "task_id": "00000000-0000-4000-8000-000000000000"}
    body = {
        "request_id": request_id,
        "policy_context": context(handle, ACTIONS.get(op, op)),
        "payload": _payload(op, handle),
    }
    return json.loads(json.dumps(body))  # a copy: the placements below must not touch shared fixtures


# Where the hostile value goes: a string the envelope requires, one inside the body, and the subject
# id (which the refusal's own audit record digests).
def _inside(body: dict) -> dict:
    return body.get("policy_context") or body.get("client") or body


PLACES = {
    "request_id": lambda body: body.__setitem__("request_id", HOLE),
    "nested": lambda body: _inside(body).__setitem__("name" if "client" in body else "reason", HOLE),
    "subject_id": lambda body: (
        body["policy_context"]["acting_for_subject"].__setitem__("id", HOLE)
        if "policy_context" in body
        else _inside(body).__setitem__("version" if "client" in body else "task_id", HOLE)
    ),
}


def _send(handle, op: str, raw: bytes):
    client = handle.client
    client.raise_request_exception = False
    return client.generic("POST", f"/mgp/{op}", raw, content_type="application/json")


def _assert_clean_refusal(response) -> None:
    assert response.status_code < 500, response.content[:500]
    assert response.status_code == 400, response.content[:500]
    body = response.json()
    assert body["status"] == "error" and body["data"] is None
    assert body["error"]["code"] == "MGP_INVALID_OBJECT", body
    assert body["error"].get("details", {}).get("retryable") is not True


def _nothing_stored() -> None:
    assert not Proposal.objects.exists() and not Memory.objects.exists()
    assert not MgpRecord.objects.exists() and not MgpTask.objects.exists()


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("op", ALL)
def test_a_hostile_value_is_a_clean_invalid_object(runtime, op, value, place):
    body = _body(op, runtime)
    PLACES[place](body)
    raw = json.dumps(body).replace(f'"{HOLE}"', VALUES[value]).encode()
    _assert_clean_refusal(_send(runtime, op, raw))
    _nothing_stored()


@pytest.mark.parametrize("op", ALL)
def test_an_over_long_request_id_is_a_clean_invalid_object(runtime, op):
    raw = json.dumps(_body(op, runtime, request_id="r" * 300)).encode()
    _assert_clean_refusal(_send(runtime, op, raw))
    _nothing_stored()


@pytest.mark.parametrize("op", ALL)
def test_a_body_over_the_size_limit_is_refused_before_it_is_parsed(runtime, op, settings):
    settings.CUSTODIAN_MAX_BODY_BYTES = 4096
    body = _body(op, runtime)
    body["padding"] = "x" * 10_000
    response = _send(runtime, op, json.dumps(body).encode())
    assert response.status_code in (400, 413), response.content[:300]
    assert response.json()["error"]["code"] == "MGP_INVALID_OBJECT"
    assert response.json()["error"].get("details", {}).get("retryable") is not True
    _nothing_stored()


@pytest.mark.parametrize("raw", [b"\xff\xfe not utf-8", b'{"request_id": ', b"", b"[]"])
def test_a_body_that_is_not_a_json_object_is_a_clean_invalid_object(runtime, raw):
    _assert_clean_refusal(_send(runtime, "get", raw))
