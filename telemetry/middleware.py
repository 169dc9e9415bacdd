"""Request and correlation ids on every request, and one access-log line per request.

Outermost in ``MIDDLEWARE``: the ids are bound before anything below logs, the duration covers
the whole stack, and a refusal by any middleware still gets its line. The line names the
resolved route (never the raw path, which may carry ids or a query string), who asked (agent
or user ids and names, never a token), and the proposal the response is about; never a body.
``CUSTODIAN_ACCESS_LOG = False`` drops the line and keeps the ids.
"""

import time
from collections.abc import Callable
from typing import Any

import structlog
from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.utils.functional import empty

from telemetry.context import new_request_id, safe_token

access_log = structlog.stdlib.get_logger("custodian.access")
# The URL names whose POST answers with a new proposal's id (a submit, or an MGP write).
SUBMIT_ROUTES = frozenset({"proposals"})


class RequestLogMiddleware:
    """Bind ``request_id``/``correlation_id``, echo them as headers, and log the request once."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.enabled = settings.CUSTODIAN_ACCESS_LOG

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        started = time.perf_counter()
        request_id = safe_token(request.META.get("HTTP_X_REQUEST_ID")) or new_request_id()
        correlation_id = safe_token(request.META.get("HTTP_X_CORRELATION_ID")) or request_id
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id, correlation_id=correlation_id)
        try:
            response = self.get_response(request)
            response["X-Request-Id"] = request_id
            response["X-Correlation-Id"] = correlation_id
            if self.enabled:
                access_log.info("request", **_fields(request, response, started))
            return response
        finally:
            structlog.contextvars.clear_contextvars()


def _fields(request: HttpRequest, response: HttpResponseBase, started: float) -> dict[str, Any]:
    match = request.resolver_match
    fields: dict[str, Any] = {
        "method": request.method,
        "route": match.route if match else None,
        "status": response.status_code,
        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
    }
    fields.update(_principal(request))
    proposal_id = _proposal_id(request, response)
    if proposal_id:
        fields["proposal_id"] = proposal_id
    return fields


def _principal(request: HttpRequest) -> dict[str, Any]:
    """Who asked, as ids and names; a session user is named only if the request already loaded it."""
    principal = getattr(request.__dict__.get("user"), "_wrapped", request.__dict__.get("user"))
    if principal is None or principal is empty or not getattr(principal, "is_authenticated", False):
        return {}
    if hasattr(principal, "username"):
        return {"user_id": principal.pk, "user": principal.username}
    return {"tenant_id": str(principal.tenant_id), "agent_id": str(principal.pk), "agent": principal.name}


def _proposal_id(request: HttpRequest, response: HttpResponseBase) -> str | None:
    match = request.resolver_match
    if match is None:
        return None
    if "proposal_id" in match.kwargs:
        return str(match.kwargs["proposal_id"])
    data = getattr(response, "data", None)
    if match.url_name in SUBMIT_ROUTES and request.method == "POST" and isinstance(data, dict):
        value = data.get("id")
        return str(value) if value else None
    return None
