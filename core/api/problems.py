"""Render every API error as ``application/problem+json`` (RFC 9457) with a stable ``code``.

This is the only place that turns exceptions into HTTP error bodies.
"""

import logging
import math
import sys
from collections.abc import Callable
from http import HTTPStatus
from typing import Any, TypeVar

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DatabaseError, DataError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.urls import Resolver404, resolve
from django.views.defaults import page_not_found, server_error
from rest_framework import exceptions as drf
from rest_framework.response import Response
from rest_framework.views import set_rollback

from core.errors import DomainError
from core.signals import request_denied

logger = logging.getLogger(__name__)

PROBLEM_CONTENT_TYPE = "application/problem+json"
R = TypeVar("R", bound=HttpResponse)
SERVICE_UNAVAILABLE_RETRY_SECONDS = 1  # a 503's Retry-After: short, the database usually comes back soon
# A statement cancelled past its budget (CUSTODIAN_STATEMENT_TIMEOUT_MS, config/gunicorn.py): the same
# request would cost as much again at once, so the caller waits longer before it retries.
QUERY_TIMEOUT_RETRY_SECONDS = 5
QUERY_CANCELED = "57014"  # PostgreSQL's SQLSTATE for a statement cancelled (statement_timeout)

_DRF_CODES = {
    drf.ParseError: "malformed_json",
    drf.AuthenticationFailed: "not_authenticated",
    drf.NotAuthenticated: "not_authenticated",
    drf.PermissionDenied: "permission_denied",
    drf.NotFound: "not_found",
    drf.MethodNotAllowed: "method_not_allowed",
    drf.NotAcceptable: "not_acceptable",
    drf.UnsupportedMediaType: "unsupported_media_type",
    drf.Throttled: "throttled",
    drf.ValidationError: "validation_error",
}


def tag_problem(response: R, code: str) -> R:
    """Note the stable code on a refusal, for the refusal audit (``denied_code``) to record."""
    response.problem_code = code  # type: ignore[attr-defined]
    return response


def problem_response(status: int, code: str, title: str, detail: str = "", **extra: Any) -> Response:
    """Return a problem+json response."""
    body: dict[str, Any] = {
        "type": f"urn:custodian:problem:{code}",
        "title": title,
        "status": status,
        "code": code,
    }
    if detail:
        body["detail"] = detail
    body.update(extra)
    return tag_problem(Response(body, status=status, content_type=PROBLEM_CONTENT_TYPE), code)


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Any:
    """DRF exception handler: domain, DRF, Django and database errors to problem+json.

    A ``Response``, or None for an exception DRF should re-raise; typed ``Any`` because callers
    outside DRF (a batch item's answer) read the response of errors they know it renders.
    """
    return _problem_for(exc)


# Refusals the audit trail records, and the code each gets when its response names none.
DENIED_STATUSES = {401: "not_authenticated", 403: "permission_denied", 404: "not_found", 429: "throttled"}


def announce_denial(request: HttpRequest, status: int, code: str) -> None:
    """Let the audit trail record a refused request (never fails the response).

    ``tenancy.middleware.ThrottleMiddleware`` calls this once per request, for the response the
    caller actually gets (so a throttled refusal is recorded as a 429); nothing else should.
    """
    if status in DENIED_STATUSES:
        try:
            request_denied.send(sender=None, request=request, status=status, code=code)
        except DatabaseError:
            logger.warning("could not audit a denied request to %s", request.path)


def denial_code(response: HttpResponseBase) -> str:
    """Return the problem ``code`` of a response, or the usual one for its status."""
    code: str = getattr(response, "problem_code", "")
    return code or DENIED_STATUSES.get(response.status_code, "")


def retry_after(wait: float | None) -> str:
    """Return a ``Retry-After`` value: whole seconds, at least one."""
    return str(max(1, math.ceil(wait or 0)))


def throttled_response(request: HttpRequest, wait: float | None) -> HttpResponse:
    """Answer 429 outside DRF: problem+json under /api/, plain text elsewhere; always with Retry-After."""
    response: HttpResponse
    if _is_api(request):
        response = plain_problem(429, "throttled", "Request was throttled.")
    else:
        text = HttpResponse("Too many requests. Try again later.\n", status=429, content_type="text/plain")
        response = tag_problem(text, "throttled")
    response["Retry-After"] = retry_after(wait)
    return response


def _problem_for(exc: Exception) -> Response | None:
    set_rollback()
    if isinstance(exc, DomainError):
        return problem_response(exc.status, exc.code, exc.title, exc.detail, **exc.extra)
    if isinstance(exc, RequestDataTooBig):
        return problem_response(413, "payload_too_large", "Request body too large")
    if isinstance(exc, Http404):
        exc = drf.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = drf.PermissionDenied()
    elif isinstance(exc, DjangoValidationError):
        exc = drf.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    elif isinstance(exc, DataError):  # a value the database cannot hold came from the request
        return problem_response(400, "invalid_value", "A value is out of range for storage")
    elif is_query_timeout(exc):
        logger.warning("statement cancelled past its time budget: %s", exc)
        return _query_timeout(problem_response)
    elif isinstance(exc, OperationalError):
        logger.warning("database unavailable: %s", exc)
        return _retry_soon(problem_response(503, "service_unavailable", "Database unavailable, retry later"))
    elif isinstance(exc, DatabaseError):
        logger.exception("database error")
        return _retry_soon(problem_response(503, "service_unavailable", "Storage error, retry later"))
    if not isinstance(exc, drf.APIException):
        return None
    code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), "error")
    if isinstance(exc, drf.ValidationError):
        response = problem_response(
            400, code, "Invalid request", "See errors for each field.", errors=exc.detail
        )
    else:
        response = problem_response(exc.status_code, code, _title_of(exc), str(exc.detail))
    auth_header = getattr(exc, "auth_header", None)
    if auth_header:
        response["WWW-Authenticate"] = auth_header
    if isinstance(exc, drf.Throttled):
        response["Retry-After"] = retry_after(getattr(exc, "wait", None))
    return response


def is_query_timeout(exc: BaseException | None) -> bool:
    """True for a statement PostgreSQL cancelled because it ran past ``statement_timeout``."""
    if not isinstance(exc, OperationalError):
        return False
    sqlstate: object = getattr(exc.__cause__, "sqlstate", None)
    return sqlstate == QUERY_CANCELED


def _query_timeout(render: Callable[[int, str, str], R]) -> R:
    """A 503 ``query_timeout`` problem, with a Retry-After longer than an outage's."""
    response = render(503, "query_timeout", "The request's query ran past its time budget; retry later")
    response["Retry-After"] = retry_after(QUERY_TIMEOUT_RETRY_SECONDS)
    return response


def _retry_soon(response: R) -> R:
    """Say when to come back after a storage outage: clients honour Retry-After instead of guessing."""
    response["Retry-After"] = retry_after(SERVICE_UNAVAILABLE_RETRY_SECONDS)
    return response


def _title_of(exc: drf.APIException) -> str:
    """The stock sentence of ``exc``, or its status phrase if that sentence is a template."""
    title = str(exc.default_detail)
    return HTTPStatus(exc.status_code).phrase if "{" in title else title


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def not_found_handler(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler404: problem+json under /api/, Django's page elsewhere."""
    if not _is_api(request):
        return page_not_found(request, exception)
    return plain_problem(404, "not_found", "Not found", detail=_path_hint(request.path))


def _path_hint(path: str) -> str:
    """Say which path exists when the caller only got the trailing slash wrong, else where the list is."""
    other = path[:-1] if path.endswith("/") else f"{path}/"
    try:
        resolve(other)
    except Resolver404:
        return "No endpoint has this path; /api/docs/ lists every one."
    return f"No endpoint has this path; did you mean {other}?"


def server_error_handler(request: HttpRequest) -> HttpResponse:
    """handler500: problem+json under /api/ (the traceback goes to the log only).

    A database that refuses connections (down, or at its connection limit) is
    a 503 everywhere, API or not: the caller should retry, nothing is broken.
    """
    if is_query_timeout(sys.exc_info()[1]) and _is_api(request):
        return _query_timeout(plain_problem)
    if isinstance(sys.exc_info()[1], OperationalError):
        if _is_api(request):
            return _retry_soon(plain_problem(503, "service_unavailable", "Database unavailable, retry later"))
        text = HttpResponse("Database unavailable, retry later.\n", status=503, content_type="text/plain")
        return _retry_soon(text)
    if not _is_api(request):
        return server_error(request)
    return plain_problem(500, "server_error", "Internal error")


def plain_problem(status: int, code: str, title: str, detail: str = "") -> JsonResponse:
    """A problem+json response outside DRF (the URL resolver's own 404 and 500)."""
    body: dict[str, Any] = {
        "type": f"urn:custodian:problem:{code}",
        "title": title,
        "status": status,
        "code": code,
    }
    if detail:
        body["detail"] = detail
    return tag_problem(JsonResponse(body, status=status, content_type=PROBLEM_CONTENT_TYPE), code)
