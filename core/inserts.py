"""INSERT statements for the hot write paths, built from the model's fields without the ORM's compiler.

``bulk_create`` compiles its SQL anew on every call, and on PostgreSQL it sends each column as an
array (``UNNEST``) whose text encoding escapes every quote of every JSON value one regex match at a
time: a third of a batch submit's CPU went there. These statements are prepared the way Django's
own insert compiler prepares them (``pre_save`` then ``get_db_prep_save`` per field), so what lands
in the table is the same. ``run_together`` sends several as one statement on PostgreSQL (each a
data-modifying ``WITH`` part, one round trip) and one after another elsewhere.
"""

import functools
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import AutoField, BigAutoField, Field, JSONField, Model, SmallAutoField
from psycopg.types.json import Jsonb

Params = list[Any]


@dataclass(frozen=True)
class Statement:
    """One SQL statement and its parameters; ``name`` lets a later part of ``run_together`` read it."""

    sql: str
    params: Params = field(default_factory=list)
    name: str = ""
    inserts: Sequence[Model] = ()  # marked saved once the statement has run


@dataclass(frozen=True)
class _Insert:
    """What an INSERT into one model's table writes: the fields and the SQL around the rows."""

    fields: "tuple[Field[Any, Any], ...]"
    columns: tuple[str, ...]
    head: str  # INSERT INTO table (columns)
    from_json: str  # SELECT columns FROM the rows as one JSON parameter (PostgreSQL)


@functools.cache
def _insert(model: type[Model]) -> _Insert:
    fields = tuple(
        f
        for f in model._meta.concrete_fields
        if not isinstance(f, AutoField | BigAutoField | SmallAutoField) and not f.generated
    )
    encoded = [f.name for f in fields if isinstance(f, JSONField) and f.encoder is not None]
    if encoded:  # _json_ready sends a JSON value as it is, which only the default encoder matches
        raise TypeError(f"{model.__name__}: JSON fields with an encoder cannot be inserted here: {encoded}")
    quote = connection.ops.quote_name
    table, columns = quote(model._meta.db_table), ", ".join(quote(f.column) for f in fields)
    return _Insert(
        fields=fields,
        columns=tuple(f.column for f in fields),
        head=f"INSERT INTO {table} ({columns})",
        from_json=f"SELECT {columns} FROM jsonb_populate_recordset(NULL::{table}, %s::jsonb)",  # noqa: S608
    )


def insert_statement(objs: Sequence[Model], *, name: str = "", returning: str = "") -> Statement:
    """One INSERT of ``objs`` (one model's, at least one); ``run_together`` marks them saved.

    Values are prepared as a save prepares them (``auto_now_add`` sets the attribute too). On
    PostgreSQL the rows travel as one JSON parameter that ``jsonb_populate_recordset`` casts
    to the table's row type: a short statement psycopg parses once, where a ``VALUES`` list
    has a placeholder per value to find and fill on every call.
    """
    insert = _insert(type(objs[0]))
    db = connections[DEFAULT_DB_ALIAS]  # not the ``connection`` proxy: a lookup per value adds up
    rows = [[f.get_db_prep_save(f.pre_save(obj, add=True), db) for f in insert.fields] for obj in objs]
    if db.vendor == "postgresql":
        body = json.dumps([dict(zip(insert.columns, row, strict=True)) for row in rows], default=_json_ready)
        sql, params = f"{insert.head} {insert.from_json}", [body]
    else:
        placeholders = f"({', '.join(['%s'] * len(insert.fields))})"
        sql = f"{insert.head} VALUES {', '.join([placeholders] * len(rows))}"
        params = [value for row in rows for value in row]
    return Statement(f"{sql} RETURNING {returning}" if returning else sql, params, name, objs)


def _json_ready(value: Any) -> Any:
    """A prepared value PostgreSQL reads back from JSON as the column's type (its text form)."""
    if isinstance(value, uuid.UUID | Decimal):
        return str(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Jsonb):  # a JSONField's value (``_insert`` refuses custom encoders)
        return value.obj
    raise TypeError(f"cannot send {type(value).__name__} as JSON; add it to core.inserts._json_ready")


def run_together(statements: Sequence[Statement]) -> None:
    """Run ``statements`` in order, in the caller's transaction; on PostgreSQL in one round trip.

    On PostgreSQL every statement but the last becomes a ``WITH name AS (…)`` part. All parts
    see the same snapshot, so a part reads what an earlier one wrote only through its name
    (``RETURNING``); foreign keys are checked once the whole statement has run. Elsewhere the
    statements run one after another, and a later one reads the tables themselves.
    """
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            for statement in statements:
                cursor.execute(statement.sql, statement.params)
        else:
            *parts, last = statements
            with_clause = ", ".join(
                f"{part.name or f'part{index}'} AS ({part.sql})" for index, part in enumerate(parts)
            )
            sql = f"WITH {with_clause} {last.sql}" if parts else last.sql
            cursor.execute(sql, [param for statement in statements for param in statement.params])
    for statement in statements:
        for obj in statement.inserts:
            obj._state.adding = False
            obj._state.db = connection.alias
