"""Health: whether this process can serve requests (what MGP's compliance runner and a balancer poll)."""

from django.db import DatabaseError, connection
from django.http import JsonResponse
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.parsers import BaseParser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


class ReadyzApi(APIView):
    """GET /readyz: the database answers."""

    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes: list[type[BasePermission]] = []
    parser_classes: list[type[BaseParser]] = []
    schema = None  # not part of Custodian's API (/api/schema/)

    def get(self, request: Request) -> JsonResponse:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        except DatabaseError:
            return JsonResponse({"status": "unavailable"}, status=503)
        return JsonResponse({"status": "ready"})

    # The 429 is a plain JsonResponse, not DRF's Response.
    def handle_exception(self, exc: Exception) -> Response | JsonResponse:  # type: ignore[override]
        """A throttled poll answers in MGP's error envelope, as its compliance runner reads it."""
        if not isinstance(exc, exceptions.Throttled):
            return super().handle_exception(exc)
        body = {
            "request_id": "unknown",
            "status": "error",
            "error": {"code": "MGP_BACKEND_ERROR", "message": "Throttled", "details": {"retryable": True}},
            "data": None,
        }
        response = JsonResponse(body, status=429)
        response["Retry-After"] = str(int(getattr(exc, "wait", None) or 1))
        return response
