"""Throttle before refusing: count every request once, then audit the refusal the caller gets."""

from rest_framework.views import APIView

from core.api.problems import announce_denial, denial_code, throttled_response
from tenancy.throttling import COUNTED, TokenRateThrottle


class ThrottleMiddleware:
    """Count every request once before any refusal is answered, then audit the refusal given.

    DRF views count a request in ``check_throttles``, after authentication, so a valid token
    uses its own bucket. DRF answers a bad token, a missing one or a missing permission before
    that; those requests, unknown URLs and everything DRF never sees are counted here (other
    views before they run), so an unauthenticated flood is throttled on its address like any
    other caller. Last, the refusal the caller actually gets (401, 403, 404 or 429) is audited.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code >= 400 and not getattr(request, COUNTED, False):
            response = self._throttled(request) or response
        announce_denial(request, response.status_code, denial_code(response))
        return response

    def process_view(self, request, view_func, view_args, view_kwargs):
        view_class = getattr(view_func, "cls", None)
        if isinstance(view_class, type) and issubclass(view_class, APIView):
            return None  # counted by DRF once it knows the token
        return self._throttled(request)

    def _throttled(self, request):
        throttle = TokenRateThrottle()
        if throttle.allow_request(request, None):
            return None
        return throttled_response(request, throttle.wait())
