"""Security headers Django 5.2 does not set itself."""

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
