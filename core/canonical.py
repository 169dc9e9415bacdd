"""Canonical JSON (RFC 8785) and the SHA-256 digests built on it.

Every digest in Custodian (evidence content, action digests, policy
fingerprints, receipt hashes) goes through :func:`digest`, so a hash never
depends on key order, whitespace or the Python version that computed it.

Most values Custodian hashes (receipts, frozen actions without numbers)
hold only strings, safe integers, booleans and nulls under ASCII keys; for
those the standard library's sorted, compact ``json.dumps`` produces exactly
the RFC 8785 bytes, about four times faster than the reference encoder.
Anything else (floats above all, whose RFC 8785 form differs from
Python's) goes to the reference encoder. A property test holds the two equal.
"""

import hashlib
import json
from typing import Any

import rfc8785

_MAX_SAFE_INTEGER = 2**53 - 1  # RFC 8785 (I-JSON) numbers are IEEE 754 doubles
_encode_plain = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode


def canonical_json(value: Any) -> bytes:
    """Return the RFC 8785 canonical encoding of a JSON value."""
    if _is_plain(value):
        try:
            return _encode_plain(value).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: let the reference encoder decide
            pass
    return rfc8785.dumps(value)


def digest(value: Any) -> str:
    """Return the hex SHA-256 of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def _is_plain(value: Any) -> bool:
    """True if ``json.dumps`` already encodes ``value`` as RFC 8785 does.

    Strings escape the same way in both; ASCII keys sort the same by code
    point (Python) and by UTF-16 code unit (RFC 8785); integers within the
    safe range print the same. Floats do not (``1.0`` vs ``1``, ``1e-07``
    vs ``1e-7``), nor do types the reference encoder rejects.
    """
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER
    if kind is dict:
        return all(type(key) is str and key.isascii() and _is_plain(item) for key, item in value.items())
    if kind is list:
        return all(_is_plain(item) for item in value)
    return False
