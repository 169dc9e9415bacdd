"""A JSON parser that refuses hostile bodies before they reach a serializer."""

import json
import math
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from core.errors import DomainError


class PayloadTooLarge(DomainError):
    code = "payload_too_large"
    status = 413
    title = "Request body too large"


class MalformedJSON(DomainError):
    code = "malformed_json"
    status = 400
    title = "Request body is not valid JSON"


_MAX_SAFE_INTEGER = 2**53 - 1


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _check_tree(value: Any, max_depth: int) -> None:
    """Refuse deep nesting, NUL, lone surrogates and numbers outside I-JSON (RFC 7493).

    PostgreSQL cannot store U+0000 in text or jsonb, and canonical JSON
    (RFC 8785) cannot hash integers beyond 2**53 or infinities: letting any
    of them through would turn bad input into a 500 later.
    """
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise MalformedJSON(f"JSON nested deeper than {max_depth} levels")
        if isinstance(node, str):
            _check_string(node)
        elif isinstance(node, bool):
            continue
        elif isinstance(node, int):
            if abs(node) > _MAX_SAFE_INTEGER:
                raise MalformedJSON("Integers must lie within ±(2**53 - 1)")
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise MalformedJSON("Numbers must be finite")
        elif isinstance(node, dict):
            for key, child in node.items():
                _check_string(key)
                stack.append((child, depth + 1))
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)


def _check_string(text: str) -> None:
    if "\x00" in text:
        raise MalformedJSON("NUL characters are not allowed")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise MalformedJSON("Lone surrogate escapes are not valid Unicode") from None


class StrictJSONParser(JSONParser):
    """Parse JSON bodies within a size and depth budget, strictly UTF-8, no NaN."""

    def parse(self, stream, media_type=None, parser_context=None):
        # A view may raise the limits for itself (the batch endpoint); every other view gets the default.
        view = (parser_context or {}).get("view")
        limit = getattr(view, "max_body_bytes", None) or settings.CUSTODIAN_MAX_BODY_BYTES
        depth = settings.CUSTODIAN_MAX_JSON_DEPTH + getattr(view, "extra_json_depth", 0)
        if stream is None:
            raise ParseError("Empty body")
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise PayloadTooLarge(f"Body exceeds {limit} bytes")
        try:
            text = raw.decode("utf-8")
            data = json.loads(text, parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise MalformedJSON(str(exc)[:200]) from None
        _check_tree(data, depth)
        return data
