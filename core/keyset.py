"""Keyset ("seek") pagination for server-rendered lists.

OFFSET pagination reads and throws away every row before the page, so page
2,000 of a 100k-row queue is slow. A keyset page starts right after the last
row seen, using the same index as the ORDER BY, so every page costs the same.

A cursor holds the last row's ordering values, signed with the secret key and
salted with the list it belongs to (model and ordering). Anything else, a
forged, tampered or truncated cursor or one issued for another list, is
refused with :class:`InvalidCursor` before it can reach a query.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from django.core import signing
from django.db.models import Model, Q, QuerySet

from core.api.pagination import InvalidCursor

_M = TypeVar("_M", bound=Model)


@dataclass(frozen=True)
class KeysetPage(Generic[_M]):
    items: list[_M]
    next_cursor: str | None


def keyset_page(
    queryset: QuerySet[_M], *, ordering: tuple[str, ...], cursor: str | None, size: int
) -> KeysetPage[_M]:
    """Return ``size`` rows of ``queryset`` ordered by ``ordering``, after ``cursor`` if given.

    The last ordering field must be unique (``id``) so the order is total.
    Raises :class:`InvalidCursor` for a cursor this list did not issue.
    """
    queryset = queryset.order_by(*ordering)
    signer = signing.Signer(salt=f"core.keyset:{queryset.model._meta.label}:{','.join(ordering)}")
    if cursor:
        queryset = queryset.filter(_after(ordering, _decode(signer, cursor, len(ordering))))
    rows = list(queryset[: size + 1])
    next_cursor = None
    if len(rows) > size:
        next_cursor = signer.sign_object([_value(rows[size - 1], field) for field in ordering])
    return KeysetPage(rows[:size], next_cursor)


def _after(ordering: tuple[str, ...], values: list[Any]) -> Q:
    """Build (a > x) OR (a = x AND b > y) OR … honouring each field's direction."""
    condition = Q()
    for index, field in enumerate(ordering):
        name = field.lstrip("-")
        step = Q(**{f"{name}__{'lt' if field.startswith('-') else 'gt'}": values[index]})
        for earlier, value in zip(ordering[:index], values[:index], strict=True):
            step &= Q(**{earlier.lstrip("-"): value})
        condition |= step
    return condition


def _value(row: Model, field: str) -> Any:
    value = getattr(row, field.lstrip("-"))
    return (
        value.isoformat()
        if isinstance(value, datetime)
        else str(value)
        if not isinstance(value, int)
        else value
    )


def _decode(signer: signing.Signer, cursor: str, length: int) -> list[Any]:
    """Return the values of a cursor this list issued; raise InvalidCursor for anything else."""
    try:
        values = signer.unsign_object(cursor)
    except (signing.BadSignature, ValueError, UnicodeError):
        raise InvalidCursor() from None
    if not isinstance(values, list) or len(values) != length:
        raise InvalidCursor()
    return values
