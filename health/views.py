"""Health probes: whether this process runs (/livez) and whether it can serve requests (/readyz).

Neither needs a credential. /readyz is what MGP's compliance runner polls and keeps its
throttled answer in MGP's error envelope; /livez is never throttled, so a busy address
(a node's kubelet behind one IP) cannot get a live process restarted.
"""

from django.http import JsonResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.authentication import BaseAuthentication
from rest_framework.parsers import BaseParser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from health.probes import CHECKS, run_checks

LIVE = inline_serializer("Live", {"status": serializers.ChoiceField(["live"])})
READY = inline_serializer(
    "Readiness",
    {
        "status": serializers.ChoiceField(["ready", "unavailable"]),
        "checks": serializers.DictField(
            child=serializers.DictField(), help_text="per check: ok, a short reason, ages in seconds"
        ),
        "failing": serializers.ListField(child=serializers.CharField(), required=False),
        "excluded": serializers.ListField(child=serializers.CharField(), required=False),
    },
)


class LivezApi(APIView):
    """The process answers; it checks nothing else (a restart would not fix a dependency)."""

    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes: list[type[BasePermission]] = []
    parser_classes: list[type[BaseParser]] = []
    throttle_classes: list[type[BaseThrottle]] = []

    @extend_schema(summary="Liveness probe", auth=[], responses={200: LIVE})
    def get(self, request: Request) -> JsonResponse:
        return JsonResponse({"status": "live"})


class ReadyzApi(APIView):
    """Every check passes (200 ``ready``), else 503 ``unavailable`` naming the failing ones.

    ``?exclude=worker&exclude=outbox`` skips checks by name, as Kubernetes' own /readyz does.
    """

    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes: list[type[BasePermission]] = []
    parser_classes: list[type[BaseParser]] = []

    @extend_schema(
        summary="Readiness probe",
        auth=[],
        parameters=[
            OpenApiParameter("exclude", str, many=True, enum=list(CHECKS), description="skip a check")
        ],
        responses={
            200: READY,
            503: OpenApiResponse(READY, description="not ready: `failing` names the checks"),
            429: OpenApiResponse(description="throttled, in MGP's error envelope"),
        },
    )
    def get(self, request: Request) -> JsonResponse:
        excluded = frozenset(request.query_params.getlist("exclude")) & CHECKS.keys()
        outcomes = run_checks(exclude=excluded)
        failing = [name for name, outcome in outcomes.items() if not outcome.ok]
        body: dict[str, object] = {
            "status": "unavailable" if failing else "ready",
            "checks": {name: outcome.as_json() for name, outcome in outcomes.items()},
        }
        if failing:
            body["failing"] = failing
        if excluded:
            body["excluded"] = sorted(excluded)
        return JsonResponse(body, status=503 if failing else 200)

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
