"""drf-spectacular hook: document the problem+json errors every operation can answer."""

from typing import Any

from drf_spectacular.generators import SchemaGenerator
from rest_framework.request import Request

PROBLEM = {
    "type": "object",
    "description": "RFC 9457 problem details; `code` is stable and machine-readable.",
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "code": {"type": "string"},
        "detail": {"type": "string"},
        "errors": {"type": "object", "description": "Field errors (validation_error)"},
    },
    "required": ["type", "title", "status", "code"],
}
ERRORS = {
    "400": "Invalid input (validation_error, malformed_json, invalid_cursor, …)",
    "401": "Missing, unknown, expired or revoked token (not_authenticated)",
    "403": "Not allowed for this caller (permission_denied, tenant_mismatch, self_approval, …)",
    "404": "Not found in the caller's tenant (not_found)",
    "409": "Conflict (idempotency_conflict, base_revision_stale, invalid_transition, stale_digest, …)",
    "413": "Body too large (payload_too_large)",
    "429": "Throttled (throttled)",
    "503": "Storage unavailable or a query past its time budget, retry (service_unavailable, query_timeout)",
}


def add_problem_responses(
    result: dict[str, Any], generator: SchemaGenerator, request: Request | None, public: bool
) -> dict[str, Any]:
    result.setdefault("components", {}).setdefault("schemas", {})["Problem"] = PROBLEM
    reference = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/v1/"):
            continue
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for status, description in ERRORS.items():
                responses.setdefault(status, {"description": description, "content": reference})
    return result
