"""A JSON parser that refuses hostile bodies before they reach a serializer."""

from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from core import strict_json
from core.errors import DomainError


class PayloadTooLarge(DomainError):
    code = "payload_too_large"
    status = 413
    title = "Request body too large"


class MalformedJSON(DomainError):
    code = "malformed_json"
    status = 400
    title = "Request body is not valid JSON"


def _check_tree(value: Any, max_depth: int) -> None:
    """Refuse what :mod:`core.strict_json` refuses, as a problem the handler renders."""
    try:
        strict_json.check(value, max_depth=max_depth)
    except strict_json.JSONRefused as exc:
        raise MalformedJSON(str(exc)) from None


class StrictJSONParser(JSONParser):
    """Parse JSON bodies within a size and depth budget, strictly (:mod:`core.strict_json`)."""

    def parse(
        self,
        stream: IO[Any] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
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
            return strict_json.loads(raw, max_depth=depth)
        except strict_json.JSONRefused as exc:
            raise MalformedJSON(str(exc)) from None
