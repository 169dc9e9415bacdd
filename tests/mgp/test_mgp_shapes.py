"""Custodian's MGP answers match MGP's response schemas (the suite checks few of them)."""

import pytest

from mgp.validation import validate
from tests.mgp.conftest import call, memory, verb, written

pytestmark = pytest.mark.django_db


def test_answers_match_the_response_schemas(runtime):
    written(runtime, memory("mem_shape", statement="Alice prefers tea."))
    written(runtime, memory("mem_secret", statement="Alice's code is tea-77", sensitivity="confidential"))
    checks = [
        ("get", {"memory_id": "mem_shape"}, "read", "get-memory"),
        ("search", {"query": "tea", "limit": 5}, "search", "search-memory"),
        ("audit/query", {"limit": 50}, "read", "audit-query"),
        ("export", {"limit": 50}, "read", "export"),
        ("sync", {"limit": 1}, "read", "sync"),
        ("update", {"memory_id": "mem_nope", "patch": {"content": {"x": "y"}}}, "update", "update-memory"),
    ]
    for op, payload, action, schema in checks:
        response = call(runtime, op, payload, action)
        validate(response.json(), f"{schema}.response.schema.json")
    assert verb(runtime, "expire", "mem_shape")["state"] == "expired"
    again = call(runtime, "expire", {"memory_id": "mem_shape", "reason": "again"}, "expire")
    validate(again.json(), "expire-memory.response.schema.json")
    batch = call(runtime, "write/batch", {"items": [{"memory": memory("mem_shape")}]}, "write")
    validate(batch.json(), "write-batch.response.schema.json")
