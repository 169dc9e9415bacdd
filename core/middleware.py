"""Security headers Django 5.2 does not set itself, and bodies it cannot read."""

from django.http import HttpResponse

from core.api.problems import plain_problem

# Everything Custodian serves comes from its own origin (htmx and Swagger UI are vendored).
STRICT = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'self'"
)
# Swagger UI's page boots with an inline script and inline styles.
DOCS = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; frame-ancestors 'none'"
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = DOCS if request.path.startswith("/api/docs/") else STRICT
        return response


class LengthRequiredMiddleware:
    """Answer 411 to a request body sent without Content-Length (chunked).

    Django reads a body only up to Content-Length, so a chunked body would
    reach the views as empty and be refused as invalid, which misleads the
    caller about what went wrong.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            title = "Send the body with a Content-Length header (chunked bodies are not read)"
            if request.path.startswith("/api/"):
                return plain_problem(411, "length_required", title)
            return HttpResponse(f"{title}\n", status=411, content_type="text/plain")
        return self.get_response(request)
