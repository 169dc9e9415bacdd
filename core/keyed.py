"""Keyed digests: HMAC-SHA256 under the server's secret key, which the database never holds.

Two uses. Seals: the web process seals what it decided (a policy verdict, a
review decision) so the executor can tell those rows from ones written by
anyone holding only database credentials. Pseudonyms: identifiers that
audit rows must not keep in clear (an append-only row cannot be scrubbed
by a purge later).
"""

from typing import Any

from django.utils.crypto import constant_time_compare, salted_hmac

from core.canonical import canonical_json


def keyed_digest(purpose: str, value: Any) -> str:
    """Return the hex HMAC-SHA256 of the canonical JSON of ``value``, keyed per ``purpose``."""
    return salted_hmac(f"custodian.{purpose}", canonical_json(value), algorithm="sha256").hexdigest()


def keyed_digest_matches(expected: str, purpose: str, value: Any) -> bool:
    """True if ``expected`` is the keyed digest of ``value`` (constant-time; empty never matches)."""
    return bool(expected) and constant_time_compare(expected, keyed_digest(purpose, value))
