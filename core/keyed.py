"""Keyed digests: HMAC-SHA256 under the server's secret key, which the database never holds.

Two uses. Seals: the web process seals what it decided (a policy verdict, a
review decision) so the executor can tell those rows from ones written by
anyone holding only database credentials. Pseudonyms: identifiers that
audit rows must not keep in clear (an append-only row cannot be scrubbed
by a purge later).

The key is ``DJANGO_SECRET_KEY``; seals made under a key listed in
``SECRET_KEY_FALLBACKS`` still verify, so the key can be rotated with
proposals in flight, as Django does for sessions and signed values.
"""

from typing import Any

from django.conf import settings
from django.utils.crypto import constant_time_compare, salted_hmac

from core.canonical import canonical_json


def keyed_digest(purpose: str, value: Any, *, secret: str | bytes | None = None) -> str:
    """Return the hex HMAC-SHA256 of the canonical JSON of ``value``, keyed per ``purpose``."""
    message = canonical_json(value)
    return salted_hmac(f"custodian.{purpose}", message, secret=secret, algorithm="sha256").hexdigest()


def keyed_digest_matches(expected: str, purpose: str, value: Any) -> bool:
    """True if ``expected`` is the keyed digest of ``value`` under the key or a fallback (constant time)."""
    if not expected:
        return False
    secrets = [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]
    return any(constant_time_compare(expected, keyed_digest(purpose, value, secret=s)) for s in secrets)
