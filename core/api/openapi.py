"""drf-spectacular hooks: problem+json errors on every operation, a tag per area, Markdown text.

Spectacular tags an operation by its first path segment, which under ``/api/v1/`` is
``v1`` for everything; the areas below say what a reader looks for instead. Docstrings
are written for Python readers (RST ````literals````); Swagger UI renders Markdown.
"""

import re
from typing import Any

from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.openapi import AutoSchema
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


# (path prefix, tag), the first match wins; every served route falls under one (tested).
AREAS = (
    ("/api/v1/proposals/{proposal_id}/decisions/", "Reviews"),
    ("/api/v1/reviews/", "Reviews"),
    ("/api/v1/proposals/", "Proposals"),
    ("/api/v1/proposals/batch", "Proposals"),
    ("/api/v1/evidence/", "Evidence"),
    ("/api/v1/observations/", "Observations"),
    ("/api/v1/recall/", "Recall"),
    ("/api/v1/memories/", "Recall"),
    ("/api/v1/receipts/", "Receipts and audit"),
    ("/api/v1/audit/", "Receipts and audit"),
    ("/api/v1/dreaming/", "Maintenance"),
    ("/api/v1/erasures/", "Erasure"),
    ("/mgp/", "MGP"),
    ("/livez", "Health"),
    ("/healthz", "Health"),
    ("/readyz", "Health"),
)
TAGS = [
    {"name": "Proposals", "description": "Zero-write proposals: submit, list, read, withdraw, amend."},
    {"name": "Evidence", "description": "Evidence sources and their exact revisions, which proposals cite."},
    {"name": "Observations", "description": "Hand over what was said; candidate memories become proposals."},
    {"name": "Reviews", "description": "A person's review queue and decisions (personal tokens)."},
    {"name": "Recall", "description": "Memories, in the view the read policy allows, and recall feedback."},
    {"name": "Receipts and audit", "description": "Hash-chained receipts and the audit trail of reads."},
    {"name": "Maintenance", "description": "Maintenance under the same authority: Dreaming runs."},
    {
        "name": "Erasure",
        "description": "Forget a person: one reviewed plan, a receipt per purged memory, a certificate.",
    },
    {
        "name": "MGP",
        "description": "The Memory Governance Protocol over the same pipeline (`/mgp/openapi.json`).",
    },
    {"name": "Health", "description": "Liveness and readiness probes; no credential."},
]
_RST_LITERAL = re.compile(r"``(.+?)``")


def area_of(path: str) -> str:
    return next(tag for prefix, tag in AREAS if path.startswith(prefix))


def tag_by_area(
    result: dict[str, Any], generator: SchemaGenerator, request: Request | None, public: bool
) -> dict[str, Any]:
    for path, operations in result.get("paths", {}).items():
        for operation in operations.values():
            operation["tags"] = [area_of(path)]
    result["tags"] = TAGS
    written: dict[str, Any] = _markdown(result)
    return written


def _markdown(node: Any) -> Any:
    """Every ``summary`` and ``description`` with RST literals written as Markdown code."""
    if isinstance(node, list):
        return [_markdown(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: _RST_LITERAL.sub(r"`\1`", value)
        if key in ("summary", "description") and isinstance(value, str)
        else _markdown(value)
        for key, value in node.items()
    }


class CustodianAutoSchema(AutoSchema):
    """Spectacular's schema, saying ``security: []`` for a view that authenticates no one.

    Spectacular leaves ``security`` out when a view has no authentication, which OpenAPI
    reads as "the document's default applies" (a bearer token): the probes would look locked.
    """

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is not None and not self.view.authentication_classes:
            operation["security"] = []
        return operation
