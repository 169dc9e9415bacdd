"""Keyset ("seek") pagination for server-rendered lists.

OFFSET pagination reads and throws away every row before the page, so page
2,000 of a 100k-row queue is slow. A keyset page starts right after the last
row seen, using the same index as the ORDER BY, so every page costs the same.
"""

import base64
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet

from core.api.pagination import plausible_timestamp


@dataclass(frozen=True)
class KeysetPage:
    items: list
    next_cursor: str | None


def keyset_page(
    queryset: QuerySet, *, ordering: tuple[str, ...], cursor: str | None, size: int
) -> KeysetPage:
    """Return ``size`` rows of ``queryset`` ordered by ``ordering``, after ``cursor`` if given.

    The last ordering field must be unique (``id``) so the order is total.
    An unreadable cursor starts from the beginning.
    """
    queryset = queryset.order_by(*ordering)
    values = _decode(cursor, len(ordering))
    try:
        page = queryset.filter(_after(ordering, values)) if values is not None else queryset
        rows = list(page[: size + 1])
    except (ValidationError, ValueError, TypeError):  # a forged cursor: start from the top
        rows = list(queryset[: size + 1])
    next_cursor = _encode([_value(rows[size - 1], field) for field in ordering]) if len(rows) > size else None
    return KeysetPage(rows[:size], next_cursor)


def _after(ordering: tuple[str, ...], values: list) -> Q:
    """Build (a > x) OR (a = x AND b > y) OR … honouring each field's direction."""
    condition = Q()
    for index, field in enumerate(ordering):
        name = field.lstrip("-")
        step = Q(**{f"{name}__{'lt' if field.startswith('-') else 'gt'}": values[index]})
        for earlier, value in zip(ordering[:index], values[:index], strict=True):
            step &= Q(**{earlier.lstrip("-"): value})
        condition |= step
    return condition


def _value(row, field: str) -> Any:
    value = getattr(row, field.lstrip("-"))
    return (
        value.isoformat()
        if isinstance(value, datetime)
        else str(value)
        if not isinstance(value, int)
        else value
    )


def _encode(values: list) -> str:
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode()


def _decode(cursor: str | None, length: int) -> list | None:
    """Return the cursor's values, or None for anything this module did not write."""
    if not cursor:
        return None
    try:
        values = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except ValueError:
        return None
    if not isinstance(values, list) or len(values) != length:
        return None
    for value in values:
        looks_like_time = isinstance(value, str) and len(value) >= 19 and value[4:5] == "-" and "T" in value
        if looks_like_time and plausible_timestamp(value) is None:
            return None
    return values
