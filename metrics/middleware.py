"""Time every request and count its problem code, labelled by the URL pattern that answered it."""

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase

from core.api.problems import denial_code
from metrics import instruments, recording
from metrics.labels import RECALL_ROUTES, UNMATCHED_ROUTE


class MetricsMiddleware:
    """Observe each request's latency by route (the pattern, never the path), method and status.

    Right after ``AfterResponseMiddleware``, so it sees the answer the caller gets (a throttle's
    429 included) and leaves out the work deferred until the response is sent.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        started = time.perf_counter()
        instruments.REQUESTS_IN_PROGRESS.inc()
        try:
            response = self.get_response(request)
        finally:
            instruments.REQUESTS_IN_PROGRESS.dec()
        seconds = time.perf_counter() - started
        match = request.resolver_match
        route = f"/{match.route}" if match is not None and match.route else UNMATCHED_ROUTE
        recording.request_answered(
            route=route,
            method=request.method or "",
            status=response.status_code,
            seconds=seconds,
            problem_code=denial_code(response),
        )
        surface = RECALL_ROUTES.get(match.url_name or "") if match is not None else None
        if surface:
            recording.recall_answered(surface=surface, seconds=seconds)
        return response
