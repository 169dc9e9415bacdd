"""Request throttling: every request counts once against its caller, before any refusal is answered.

The caller is the token, else the signed-in person, else the client's address: ``REMOTE_ADDR``,
or behind a trusted proxy (``CUSTODIAN_TRUSTED_PROXIES``) the rightmost ``X-Forwarded-For``
hop that is not itself trusted. Counters live in the shared cache (Redis) so they hold across
processes. ``tenancy.middleware.ThrottleMiddleware`` counts what DRF does not.

Each caller has one fixed-window counter: created with the window's lifetime on first use, then
incremented, in one Redis round trip. A batch is charged once per item (``charge``). A refused
charge is taken back, so refusals do not count, as with DRF's own throttles.
"""

import ipaddress
import logging
from contextlib import suppress
from functools import lru_cache
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured
from redis.exceptions import RedisError
from rest_framework.throttling import BaseThrottle

if TYPE_CHECKING:  # rest_framework.views imports this module through its default throttles
    from rest_framework.views import APIView

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


class TokenRateThrottle(BaseThrottle):
    """Limit each token (or session user, or client address) to ``CUSTODIAN_API_RATE``."""

    def __init__(self) -> None:
        self.num_requests, self.duration = parse_rate(settings.CUSTODIAN_API_RATE)
        self._wait: float = self.duration

    def allow_request(self, request, view) -> bool:
        """Count the request once; fail open when the cache is down (an outage must not stop submissions)."""
        setattr(getattr(request, "_request", request), COUNTED, True)
        return self.charge(request, 1)

    def charge(self, request, units: int) -> bool:
        """Take ``units`` from the caller's window; refuse (taking nothing) if they do not all fit."""
        key = f"rate:{throttle_ident(request)}"  # not DRF's "throttle:" lists, should an old one linger
        try:
            used, ttl = _take(key, units, self.duration)
            if used <= self.num_requests:
                return True
            _give_back(key, units)
        except (RedisError, OSError):
            logger.warning("throttle cache unavailable; request allowed")
            return True
        self._wait = ttl if ttl > 0 else self.duration
        return False

    def wait(self) -> float:
        """Return the seconds until the window ends; never None, so 429s carry Retry-After."""
        return self._wait


def charge(view: "APIView", request, units: int) -> None:
    """Charge ``units`` more requests against the caller's rate, or raise Throttled taking nothing.

    For a request that does the work of many (a batch of N items costs N: the one DRF counted,
    then N - 1 here). Call it before anything is written.
    """
    if units <= 0:
        return
    for throttle in view.get_throttles():
        if isinstance(throttle, TokenRateThrottle) and not throttle.charge(request, units):
            view.throttled(request, throttle.wait())


@lru_cache(maxsize=8)
def parse_rate(rate: str) -> tuple[int, int]:
    """Parse ``"N/period"`` (s, m, h or d, as DRF spells it: ``1200/min``) into (N, seconds)."""
    count, period = rate.split("/")
    return int(count), {"s": 1, "m": 60, "h": 3600, "d": 86400}[period[0]]


def _take(key: str, units: int, window: int) -> tuple[int, float]:
    """Add ``units`` to the counter, starting its window if none is open; return (count, seconds left).

    On Redis: SET NX EX, INCRBY and TTL in one pipelined transaction (one round trip). Elsewhere
    (the embedded default's per-process memory cache): ``add`` then ``incr``, atomic under the cache's lock.
    """
    cache = caches["default"]  # the backend itself: ``django.core.cache.cache`` is a proxy
    if isinstance(cache, RedisCache):
        name = cache.make_and_validate_key(key)
        client = cache._cache.get_client(name, write=True)  # type: ignore[attr-defined]  # no pipeline API
        pipe = client.pipeline(transaction=True)
        pipe.set(name, 0, ex=window, nx=True)
        pipe.incrby(name, units)
        pipe.ttl(name)
        _, used, ttl = pipe.execute()
        return used, ttl
    for _ in range(2):
        cache.add(key, 0, timeout=window)
        try:
            return cache.incr(key, units), window
        except ValueError:  # expired between add and incr: open a new window
            continue
    return units, window


def _give_back(key: str, units: int) -> None:
    with suppress(ValueError):  # the window ended meanwhile: nothing to give back
        caches["default"].decr(key, units)
