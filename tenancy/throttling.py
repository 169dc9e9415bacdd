"""Per-credential request throttling (needs the shared Redis cache to hold across processes)."""

import logging

from django.conf import settings
from redis.exceptions import RedisError
from rest_framework.throttling import SimpleRateThrottle

logger = logging.getLogger(__name__)


class TokenRateThrottle(SimpleRateThrottle):
    """Limit each token (or session user, or anonymous address) to ``CUSTODIAN_API_RATE``."""

    scope = "token"

    def allow_request(self, request, view):
        """Fail open when the cache is down: an outage of Redis must not stop submissions."""
        try:
            return super().allow_request(request, view)
        except (RedisError, OSError):
            logger.warning("throttle cache unavailable; request allowed")
            return True

    def get_rate(self):
        return settings.CUSTODIAN_API_RATE

    def get_cache_key(self, request, view):
        token = getattr(request.auth, "pk", None)
        if token is not None:
            ident = f"token:{token}"
        elif getattr(request.user, "is_authenticated", False):
            ident = f"user:{request.user.pk}"
        else:
            ident = f"anon:{self.get_ident(request)}"
        return f"throttle:{ident}"
