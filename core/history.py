"""simple-history glue."""

import functools
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import Model
from django.http import HttpRequest

from core.inserts import Statement


def human_history_user(request: HttpRequest | None = None, **kwargs: Any) -> AbstractBaseUser | None:
    """Return the request's user for history rows only if it is a human account.

    Agents authenticate with tokens and are recorded on the rows themselves
    (``submitted_by``, receipts); history_user is a foreign key to users.
    """
    user = getattr(request, "user", None)
    return user if isinstance(user, get_user_model()) and user.is_authenticated else None


def copy_to_history(
    model: type[Model],
    pks: list[Any],
    *,
    history_type: str,
    when: datetime,
    reasons: dict[Any, str] | None = None,
) -> None:
    """Write one history row per row of ``model`` in ``pks``, copied by the database (INSERT … SELECT).

    The row simple-history's bulk path would build (every tracked column as
    stored now, no user, no change reason), without a Python object per row:
    building those was a quarter of the executor's CPU per entry. Call it
    after the rows' INSERT or UPDATE, in the same transaction. ``reasons``
    gives a row its change reason (by primary key).
    """
    if pks:
        statement = history_statement(model, pks, history_type=history_type, when=when, reasons=reasons)
        with connection.cursor() as cursor:
            cursor.execute(statement.sql, statement.params)


def history_statement(
    model: type[Model],
    pks: list[Any],
    *,
    history_type: str,
    when: datetime,
    reasons: dict[Any, str] | None = None,
    user_id: Any = None,
    inserted_by: str = "",
) -> Statement:
    """``INSERT INTO <history> SELECT <tracked columns>, … FROM <the rows>``: one history row per row.

    The rows are ``model``'s rows with these ``pks``. For rows that an earlier part of the same
    ``core.inserts.run_together`` call inserts, name that part (``inserted_by``, its ``RETURNING
    *``): on PostgreSQL every part sees the table as it was before the statement, so the rows
    are read from the part there, and from the table elsewhere, where parts run one by one.
    """
    quote = connection.ops.quote_name
    pk = model._meta.pk
    prep = [pk.get_db_prep_value(value, connection) for value in pks]
    reason, reason_params = "NULL", []
    if reasons:
        reason = f"CASE {quote(pk.column)} {' '.join(['WHEN %s THEN %s'] * len(pks))} END"
        reason_params = [
            param for value, key in zip(prep, pks, strict=True) for param in (value, reasons[key])
        ]
    if inserted_by and connection.vendor == "postgresql":
        source, source_params = inserted_by, []
    else:
        where = f"{quote(pk.column)} IN ({', '.join(['%s'] * len(pks))})"
        source, source_params = f"{quote(model._meta.db_table)} WHERE {where}", prep
    table, tracked = _history_columns(model)
    sql = (
        f"INSERT INTO {table} ({tracked}, history_date, history_type,"  # noqa: S608
        f" history_change_reason, history_user_id) SELECT {tracked}, %s, %s, {reason}, %s"
        f" FROM {source}"
    )
    when_value = connection.ops.adapt_datetimefield_value(when)
    return Statement(sql, [when_value, history_type, *reason_params, user_id, *source_params])


@functools.cache
def history_model(model: type[Model]) -> type[Model]:
    """simple-history's model for ``model``; ``model.history`` builds a new manager class per access."""
    history: type[Model] = model.history.model  # type: ignore[attr-defined]  # added by HistoricalRecords
    return history


@functools.cache
def _history_columns(model: type[Model]) -> tuple[str, str]:
    """The history table and its tracked columns (every column but simple-history's own), quoted."""
    history = history_model(model)
    quote = connection.ops.quote_name
    tracked = ", ".join(
        quote(field.column)
        for field in history._meta.concrete_fields
        if not field.name.startswith("history_")
    )
    return quote(history._meta.db_table), tracked
