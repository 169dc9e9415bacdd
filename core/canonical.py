"""Canonical JSON (RFC 8785) and the SHA-256 digests built on it.

Every digest in Custodian (evidence content, action digests, policy
fingerprints, receipt hashes) goes through :func:`digest`, so a hash never
depends on key order, whitespace or the Python version that computed it.

Most values Custodian hashes hold only strings, booleans, nulls, safe
integers and everyday floats under ASCII keys; for those the standard
library's sorted, compact ``json.dumps`` produces exactly the RFC 8785
bytes (once integral floats are written as integers), four to five times
faster than the reference encoder. Anything else goes to the reference
encoder. A property test holds the two equal.

RFC 8785 reads every number as an IEEE 754 double. An integer beyond
±(2**53 - 1) that a double holds exactly is hashed as that double (the
reference encoder refuses all of them): PostgreSQL's jsonb hands a float
like ``1e16`` back as the integer ``10000000000000000``, which must hash as
the float did when it was written. An integer no double holds is refused.
"""

import hashlib
import json
import math
from typing import Any

import rfc8785

_MAX_SAFE_INTEGER = 2**53 - 1  # RFC 8785 (I-JSON) numbers are IEEE 754 doubles
_encode_plain = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode


def canonical_json(value: Any) -> bytes:
    """Return the RFC 8785 canonical encoding of a JSON value."""
    try:
        return _encode_plain(_plain(value)).encode("utf-8")
    except (_NotPlain, UnicodeEncodeError):  # (a lone surrogate is not plain either)
        return rfc8785.dumps(_as_doubles(value))


def digest(value: Any) -> str:
    """Return the hex SHA-256 of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


class _NotPlain(Exception):
    pass


def _plain(value: Any) -> Any:
    """Return ``value`` as ``json.dumps`` encodes the way RFC 8785 does, or raise ``_NotPlain``.

    Strings escape the same way in both; ASCII keys sort the same by code
    point (Python) and by UTF-16 code unit (RFC 8785); safe integers print
    the same. Floats print the same only in fixed notation with a fraction
    (Python switches to exponents below 1e-4 and from 1e16, ECMAScript below
    1e-6 and from 1e21), and an integral float is written as an integer.
    """
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is dict:
        try:
            ascii_keys = "".join(value).isascii()  # also refuses non-string keys (TypeError)
        except TypeError:
            raise _NotPlain from None
        if ascii_keys:
            return {key: item if type(item) is str else _plain(item) for key, item in value.items()}
    elif kind is list:
        return [item if type(item) is str else _plain(item) for item in value]
    elif kind is int:
        if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
            return value
    elif kind is float and math.isfinite(value):
        if value.is_integer():
            if abs(value) <= _MAX_SAFE_INTEGER:
                return int(value)
        elif 1e-4 <= abs(value) < 1e16:
            return value
    elif isinstance(value, str):  # a str subclass, e.g. a TextChoices member
        return str(value)
    raise _NotPlain


def _as_doubles(value: Any) -> Any:
    """Return ``value`` with each unsafe integer that a double holds exactly turned into that double."""
    kind = type(value)
    if kind is dict:
        return {key: _as_doubles(item) for key, item in value.items()}
    if kind is list:
        return [_as_doubles(item) for item in value]
    if kind is int and abs(value) > _MAX_SAFE_INTEGER:
        try:
            double = float(value)
        except OverflowError:
            return value  # (refused by the encoder)
        return double if int(double) == value else value
    return value
