"""The MGP HTTP binding: one view, MGP's envelope in and out, MGP's error codes.

Authentication is Custodian's bearer token; the tenant and actor come from
it alone. Every failure, malformed JSON included, is an MGP envelope;
nothing here answers a framework body or a 500.
"""

import logging
import uuid
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from django.http import JsonResponse
from rest_framework import exceptions
from rest_framework.views import APIView

from core.api.parsers import PayloadTooLarge, StrictJSONParser
from core.errors import DomainError
from mgp import protocol, selectors, services, tasks
from mgp.openapi import openapi_document
from mgp.validation import MgpError, validate
from tenancy.throttling import charge

log = logging.getLogger(__name__)

READS = {"read", "search"}
BULK = {"write/batch", "import"}
# A request_id is an idempotency key: kept whole (with a batch item's index) in every row that names it.
MAX_REQUEST_ID = 128
# op → (request schema, requested_action it pins)
OPERATIONS = {
    "write": "write-memory",
    "write/batch": "write-batch",
    "search": "search-memory",
    "get": "get-memory",
    "update": "update-memory",
    "expire": "expire-memory",
    "revoke": "revoke-memory",
    "delete": "delete-memory",
    "purge": "purge-memory",
    "audit/query": "audit-query",
    "export": "export",
    "import": "import",
    "sync": "sync",
    "tasks/get": "get-task",
    "tasks/cancel": "cancel-task",
}


def envelope(
    request_id: str | None, status: int, data: Any = None, error: MgpError | None = None
) -> JsonResponse:
    body = {
        "request_id": request_id or "unknown",
        "status": "error" if error else "ok",
        "error": {"code": error.code, "message": error.message, "details": error.details} if error else None,
        "data": None if error else data,
    }
    return JsonResponse(body, status=error.status if error else status)


class _MgpView(APIView):
    parser_classes: list = []  # the body is read here, so a parse failure is an MGP error too
    schema = None  # MGP's own OpenAPI document describes these, not Custodian's /api/schema/

    def handle_exception(self, exc):
        if isinstance(exc, exceptions.Throttled):
            response = envelope(
                None, 0, error=MgpError("MGP_BACKEND_ERROR", "Throttled", 429, retryable=True)
            )
            response["Retry-After"] = str(int(getattr(exc, "wait", None) or 1))
            return response
        if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
            return envelope(
                None, 0, error=MgpError("MGP_POLICY_DENIED", "Authenticate with an agent token", 401)
            )
        if isinstance(exc, exceptions.PermissionDenied):
            return envelope(None, 0, error=MgpError("MGP_POLICY_DENIED", "Only agent tokens speak MGP"))
        return super().handle_exception(exc)


class MgpCapabilitiesApi(_MgpView):
    """GET /mgp/capabilities: discovery only, no envelope, no credential needed."""

    authentication_classes: list = []
    permission_classes: list = []

    def get(self, request):
        return JsonResponse(protocol.capabilities())


class MgpOpenApiApi(_MgpView):
    """GET /mgp/openapi.json: MGP's own OpenAPI document, bundled whole (what clients and fuzzers read)."""

    authentication_classes: list = []
    permission_classes: list = []

    def get(self, request):
        return JsonResponse(openapi_document())


class MgpOperationApi(_MgpView):
    """POST /mgp/<op>."""

    operation = ""

    def post(self, request):
        body: Any = None
        try:
            body = self.parse(request)
            status, data = self.run(request, body)
            return envelope(body.get("request_id"), status, data)
        except MgpError as error:
            return self.refuse(request, body, error)
        except DomainError as error:
            return self.refuse(request, body, services.translate(error))
        except DatabaseError:
            log.exception("MGP %s: database error", self.operation)
            err = MgpError(
                "MGP_BACKEND_ERROR", "The store is unavailable", backend="custodian", retryable=True
            )
            return envelope(_request_id(body), 0, error=err)

    @property
    def max_body_bytes(self) -> int:
        """What the strict parser reads at most: a batch or an import carries many memories."""
        return (
            settings.CUSTODIAN_MAX_BATCH_BODY_BYTES
            if self.operation in BULK
            else settings.CUSTODIAN_MAX_BODY_BYTES
        )

    @property
    def extra_json_depth(self) -> int:
        """MGP's envelope nests a payload one level deeper than REST; a batch's items two more."""
        return 3 if self.operation in BULK else 1

    def parse(self, request) -> dict:
        """The body through REST's strict parser (size, depth, NUL, surrogates, I-JSON numbers)."""
        try:
            body = StrictJSONParser().parse(request.stream, parser_context={"view": self})
        except (DomainError, exceptions.ParseError) as error:
            status = 413 if isinstance(error, PayloadTooLarge) else 400
            message = str(getattr(error, "detail", error))[:300]
            raise MgpError(
                "MGP_INVALID_OBJECT", f"The body is not acceptable JSON: {message}", status
            ) from None
        if not isinstance(body, dict):
            raise MgpError("MGP_INVALID_OBJECT", "The body must be a JSON object")
        request_id = body.get("request_id")
        if isinstance(request_id, str) and not (
            0 < len(request_id) <= MAX_REQUEST_ID and request_id.isprintable()
        ):
            raise MgpError(
                "MGP_INVALID_OBJECT",
                f"request_id must be 1 to {MAX_REQUEST_ID} printable characters",
                field="request_id",
            )
        return body

    def refuse(self, request, body: Any, error: MgpError) -> JsonResponse:
        """Answer the error and audit it (the caller is an authenticated agent here)."""
        payload = body.get("payload") if isinstance(body, dict) else None
        context = body.get("policy_context") if isinstance(body, dict) else None
        target = payload.get("memory_id") if isinstance(payload, dict) else None
        services.record_refusal(
            request.user,
            self.operation,
            _claims(context),
            request_id=_request_id(body) or "",
            code=error.code,
            reason=str(error.details.get("rule") or error.details.get("reason") or ""),
            target=target if isinstance(target, str) else None,
        )
        return envelope(_request_id(body), 0, error=error)

    def run(self, request, body: dict) -> tuple[int, Any]:
        agent = request.user
        op = self.operation
        if op == "initialize":
            return 200, protocol.initialize(body)
        validate(body, f"{OPERATIONS[op]}.request.schema.json")
        request_id, payload = body["request_id"], body.get("payload") or {}
        if op in ("tasks/get", "tasks/cancel"):
            task, context = tasks.authorised_task(agent, _uuid(body["task_id"]))
            if op == "tasks/cancel":
                task = services.cancel_task(agent, task, body.get("reason") or "")
            return 200, {"task": tasks.describe(task, context)}
        context = bind(agent, body["policy_context"], request.headers.get("MGP-Tenant-Id"))
        context["mgp_request_id"] = request_id
        if op == "write":
            outcome = services.write(agent, context, request_id, payload)
            return outcome.status, outcome.data
        if op == "write/batch":
            charge(self, request, len(payload["items"]) - 1)  # each item costs what its single write would
            return 200, {
                "results": [
                    _batch_item(agent, context, request_id, i, item)
                    for i, item in enumerate(payload["items"])
                ]
            }
        if op == "update":
            outcome = services.update(agent, context, request_id, payload)
            return outcome.status, outcome.data
        if op in ("expire", "revoke", "delete", "purge"):
            outcome = services.lifecycle(agent, context, request_id, op, payload)
            return outcome.status, outcome.data
        if op == "get":
            return 200, selectors.get(agent, context, payload)
        if op == "search":
            return 200, selectors.search(agent, context, payload)
        if op == "audit/query":
            return 200, selectors.audit(agent, payload)
        if op in ("export", "sync"):
            if payload.get("execution_mode") == "async":
                task = services.start_task(agent, context, op, request_id, {"payload": payload})
                return 202, {"task": services.task_json(task)}
            data = selectors.export(agent, context, payload, sync=op == "sync")
            services.record_bulk_read(
                agent, op, context, request_id=request_id, result_count=len(data["memories"])
            )
            return 200, data
        if op == "import":
            if payload.get("execution_mode") == "async":
                task = services.start_task(agent, context, op, request_id, {"payload": payload})
                return 202, {"task": services.task_json(task)}
            return 200, tasks.run_import(agent, context, request_id, payload)
        raise MgpError("MGP_UNSUPPORTED_CAPABILITY", f"{op} is not served")


def bind(agent, context: dict, header_tenant: str | None) -> dict:
    """The policy context as facts: tenant and actor from the token, acting-for from a grant."""
    mine = (agent.tenant.name, str(agent.tenant_id))
    claimed = context.get("tenant_id")
    if header_tenant and (header_tenant not in mine or (claimed and claimed != header_tenant)):
        raise MgpError("MGP_SCOPE_VIOLATION", "MGP-Tenant-Id names another tenant")
    if claimed and claimed not in mine:
        # A read naming another tenant is a policy denial (MGP's tenant rule);
        # a mutation is a scope violation.
        code = "MGP_POLICY_DENIED" if context.get("requested_action") in READS else "MGP_SCOPE_VIOLATION"
        raise MgpError(code, "policy_context.tenant_id names another tenant", rule="tenant_mismatch")
    return services.authorise(agent, context)


def _claims(context: Any) -> dict:
    """What a refused request's policy context claimed, as an audit row can hold it: strings only.

    The context failed validation or was never checked; a number or an object
    where a string belongs must not break the refusal's own audit record.
    """
    if not isinstance(context, dict):
        return {}
    claims: dict[str, Any] = {key: value[:200] for key, value in context.items() if isinstance(value, str)}
    subject = context.get("acting_for_subject")
    if isinstance(subject, dict) and all(isinstance(subject.get(name), str) for name in ("kind", "id")):
        claims["acting_for_subject"] = {"kind": subject["kind"][:40], "id": subject["id"][:200]}
    return claims


def _batch_item(agent, context: dict, request_id: str, index: int, item: dict) -> dict:
    try:
        outcome = services.write(agent, context, request_id, item, key=f"{request_id}:{index}")
    except MgpError as error:
        return {
            "status": "error",
            "error": {"code": error.code, "message": error.message, "details": error.details},
        }
    return {"status": "ok", **outcome.data}


def _uuid(value: str):
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def _request_id(body: Any) -> str | None:
    return (
        body.get("request_id") if isinstance(body, dict) and isinstance(body.get("request_id"), str) else None
    )
