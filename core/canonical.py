"""Canonical JSON (RFC 8785) and the SHA-256 digests built on it.

Every digest in Custodian (evidence content, action digests, policy
fingerprints, receipt hashes) goes through :func:`digest`, so a hash never
depends on key order, whitespace or the Python version that computed it.
"""

import hashlib
from typing import Any

import rfc8785


def canonical_json(value: Any) -> bytes:
    """Return the RFC 8785 canonical encoding of a JSON value."""
    return rfc8785.dumps(value)


def digest(value: Any) -> str:
    """Return the hex SHA-256 of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value)).hexdigest()
