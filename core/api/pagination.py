"""Cursor pagination: stable under inserts and constant-time at any depth."""

from datetime import datetime, timedelta

from django.utils.dateparse import parse_datetime
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination

from core.errors import DomainError

_MAX_OFFSET = timedelta(hours=14)


class InvalidCursor(DomainError):
    code = "invalid_cursor"
    status = 400
    title = "The cursor is not one this API issued"


def plausible_timestamp(value) -> datetime | None:
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

    def decode_cursor(self, request):
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise InvalidCursor() from None
        if (
            cursor is not None
            and cursor.position is not None
            and plausible_timestamp(cursor.position) is None
        ):
            raise InvalidCursor()
        return cursor
