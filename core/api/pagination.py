"""Cursor pagination: stable under inserts and constant-time at any depth."""

from base64 import b64encode
from datetime import datetime, timedelta
from typing import cast
from urllib.parse import urlencode

from django.utils.dateparse import parse_datetime
from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request

from core.errors import DomainError

_MAX_OFFSET = timedelta(hours=14)


class InvalidCursor(DomainError):
    code = "invalid_cursor"
    status = 400
    title = "The cursor is not one this API issued"


def plausible_timestamp(value: object) -> datetime | None:
    """Parse a timestamp from a client-held cursor; None unless the database could store it.

    Cursors are client input: a forged position (year 9999 with a negative
    offset, a -20:00 offset) must be refused before it reaches the database.
    """
    try:
        moment = parse_datetime(str(value))
    except ValueError:
        return None
    if moment is None or not 1970 <= moment.year <= 9000:
        return None
    offset = moment.utcoffset()
    if offset is not None and abs(offset) > _MAX_OFFSET:
        return None
    return moment


class CreatedCursorPagination(CursorPagination):
    ordering = ("-created_at", "-id")
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200

    def decode_cursor(self, request: Request) -> Cursor | None:
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise InvalidCursor() from None
        if cursor is None:
            return None
        position = cast(str | None, cursor.position)  # text as decoded (the stubs say int)
        if position is not None and str(plausible_timestamp(position)) != position:
            raise InvalidCursor()  # not a timestamp, or not spelled the way this API writes one
        if _as_issued(cursor) != request.query_params.get(self.cursor_query_param):
            raise InvalidCursor()  # e.g. an offset beyond the cutoff, which DRF would silently clamp
        return cursor


def _as_issued(cursor: Cursor) -> str:
    """Return the cursor token exactly as ``CursorPagination.encode_cursor`` writes it."""
    tokens: dict[str, object] = {"o": str(cursor.offset)} if cursor.offset else {}
    if cursor.reverse:
        tokens["r"] = "1"
    if cursor.position is not None:
        tokens["p"] = cursor.position
    return b64encode(urlencode(tokens, doseq=True).encode("ascii")).decode("ascii")
