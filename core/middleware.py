"""Bodies Django cannot read (the Content-Security-Policy header comes from django-csp)."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBase

from core.api.problems import plain_problem


class LengthRequiredMiddleware:
    """Answer 411 to a request body sent without Content-Length (chunked).

    Django reads a body only up to Content-Length, so a chunked body would
    reach the views as empty and be refused as invalid, which misleads the
    caller about what went wrong.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            title = "Send the body with a Content-Length header (chunked bodies are not read)"
            if request.path.startswith("/api/"):
                return plain_problem(411, "length_required", title)
            return HttpResponse(f"{title}\n", status=411, content_type="text/plain")
        return self.get_response(request)
