"""GET /metrics: Prometheus's text format, for whoever holds ``CUSTODIAN_METRICS_TOKEN``.

Who may read it: only a caller presenting that token as a bearer token (compared in constant
time). No agent or personal token is a metrics token. With no token configured, or metrics
turned off, the endpoint does not exist: 404 ``not_found``, as any unknown path. What it
shows is operational (counts, ages, latencies, labelled by route, code, outcome, rule and, for
the review queues only, at most ``CUSTODIAN_METRICS_TENANT_LABELS`` tenant names): never
memory content, proposal fields or ids. A scrape is no agent's request: never throttled (no
DRF throttles; the middleware only counts refusals) and never recorded as a content read.
"""

import hashlib
import hmac
from collections.abc import Iterable

from django.conf import settings
from django.http import HttpResponse
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.permissions import BasePermission
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from metrics.exposition import CONTENT_TYPE, scrape


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def token_matches(presented: str, expected: str) -> bool:
    """Compare digests in constant time, so neither the token's bytes nor its length leak."""
    return hmac.compare_digest(_digest(presented), _digest(expected))


def _bearer(request: Request) -> str:
    scheme, _, credential = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    return credential.strip() if scheme.lower() == "bearer" else ""


class OneFormat(BaseContentNegotiation):
    """The exposition format is fixed: whatever ``Accept`` says (``text/plain``, OpenMetrics), never 406."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> None:
        return None

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, str(renderer.media_type)


class MetricsApi(APIView):
    """GET /metrics: an APIView without throttles (the throttle middleware leaves APIViews to DRF)."""

    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes: list[type[BasePermission]] = []
    parser_classes: list[type[BaseParser]] = []
    throttle_classes: list[type[BaseThrottle]] = []
    renderer_classes = [JSONRenderer]  # never used: the view answers Django responses
    content_negotiation_class = OneFormat
    schema = None  # not part of Custodian's API (/api/schema/)

    def initial(self, request: Request, *args: object, **kwargs: object) -> None:
        """Refuse before the method is looked at, so no answer (a 405 either) tells an unconfigured
        endpoint from a missing one, and every method needs the token."""
        super().initial(request, *args, **kwargs)
        expected = settings.CUSTODIAN_METRICS_TOKEN
        if not (settings.CUSTODIAN_METRICS and expected):
            raise exceptions.NotFound()
        presented = _bearer(request)
        if not presented or not token_matches(presented, expected):
            raise exceptions.NotAuthenticated(
                "A metrics token is required: send Authorization: Bearer <token>."
            )

    def get_authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="metrics"'  # so a refusal is a 401 with WWW-Authenticate, not a 403

    def get(self, request: Request) -> HttpResponse:
        return HttpResponse(scrape(), content_type=CONTENT_TYPE)
