"""Request throttling: every request counts once against its caller, before any refusal is answered.

The caller is the token, else the signed-in person, else the client's address: ``REMOTE_ADDR``,
or behind a trusted proxy (``CUSTODIAN_TRUSTED_PROXIES``) the rightmost ``X-Forwarded-For``
hop that is not itself trusted. Counters live in the shared cache (Redis) so they hold across
processes. ``tenancy.middleware.ThrottleMiddleware`` counts what DRF does not.
"""

import ipaddress
import logging
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from redis.exceptions import RedisError
from rest_framework.throttling import SimpleRateThrottle

logger = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
COUNTED = "_custodian_throttle_counted"  # set on the Django request once it has been counted


def client_address(request) -> str:
    """Return the client's address; X-Forwarded-For counts only when the peer is a trusted proxy.

    Walking the header from the right, each hop a trusted proxy added is skipped; the first
    untrusted one is the client. What a client writes further left is never believed.
    """
    address = _ip(request.META.get("REMOTE_ADDR", ""))
    proxies = trusted_proxies()
    if address is None or not _is_trusted(address, proxies):
        return str(address or "")
    for hop in reversed(request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")):
        parsed = _ip(hop)
        if parsed is None:
            break
        address = parsed
        if not _is_trusted(address, proxies):
            break
    return str(address)


def address_key(address: str) -> str:
    """Key an address for throttling and audit: IPv6 by its /64 (one host usually holds all of it)."""
    parsed = _ip(address)
    if parsed is None:
        return "unknown"
    if parsed.version == 6:
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


def trusted_proxies() -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """Return the parsed ``CUSTODIAN_TRUSTED_PROXIES``; ImproperlyConfigured if malformed (tenancy.E001)."""
    return _networks(tuple(settings.CUSTODIAN_TRUSTED_PROXIES))


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]):
    try:
        return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in entries)
    except ValueError as exc:
        raise ImproperlyConfigured(f"CUSTODIAN_TRUSTED_PROXIES: {exc}") from None


def _is_trusted(address: IPAddress, proxies) -> bool:
    return any(address in network for network in proxies)


def _ip(text: str) -> IPAddress | None:
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if address.version == 6 and address.ipv4_mapped:
        return address.ipv4_mapped
    if address.version == 6 and address.scope_id:
        return ipaddress.IPv6Address(int(address))
    return address


def throttle_ident(request) -> str:
    """Name the bucket: the token, else the signed-in person, else the client address.

    A request whose token was refused has no ``auth`` and no user, so it counts against its address.
    """
    token_pk = getattr(getattr(request, "auth", None), "pk", None)
    if token_pk is not None:
        return f"token:{token_pk}"
    user = getattr(request, "user", None)
    if getattr(user, "is_authenticated", False):
        return f"user:{getattr(user, 'pk', '')}"
    return f"addr:{address_key(client_address(request))}"


class TokenRateThrottle(SimpleRateThrottle):
    """Limit each token (or session user, or client address) to ``CUSTODIAN_API_RATE``."""

    scope = "token"

    def allow_request(self, request, view):
        """Count the request; fail open when the cache is down (an outage must not stop submissions)."""
        setattr(getattr(request, "_request", request), COUNTED, True)
        try:
            return super().allow_request(request, view)
        except (RedisError, OSError):
            logger.warning("throttle cache unavailable; request allowed")
            return True

    def get_rate(self):
        return settings.CUSTODIAN_API_RATE

    def get_cache_key(self, request, view):
        return f"throttle:{throttle_ident(request)}"

    duration: int  # set from the rate by SimpleRateThrottle.__init__

    def wait(self):
        """Return the seconds until a request is allowed again; never None, so 429s carry Retry-After."""
        wait = super().wait()
        return wait if wait is not None else self.duration
