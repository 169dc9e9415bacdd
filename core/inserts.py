"""INSERT statements for the hot write paths, built from the model's fields without the ORM's compiler.

``bulk_create`` compiles its SQL anew on every call, and on PostgreSQL it sends each column as an
array (``UNNEST``) whose text encoding escapes every quote of every JSON value one regex match at a
time: a third of a batch submit's CPU went there. These statements are prepared the way Django's
own insert compiler prepares them (``pre_save`` then ``get_db_prep_save`` per field), so what lands
in the table is the same. ``run_together`` sends several as one statement on PostgreSQL (each a
data-modifying ``WITH`` part, one round trip) and one after another elsewhere.
"""

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import AutoField, BigAutoField, Field, Model, SmallAutoField

Params = list[Any]


@dataclass(frozen=True)
class Statement:
    """One SQL statement and its parameters; ``name`` lets a later part of ``run_together`` read it."""

    sql: str
    params: Params = field(default_factory=list)
    name: str = ""


@functools.cache
def _insert_fields(model: type[Model]) -> tuple[tuple[Field, ...], str]:
    """The fields an INSERT writes (all but a database-assigned key) and its ``INSERT INTO … (…)`` head."""
    fields = tuple(
        f
        for f in model._meta.concrete_fields
        if not isinstance(f, AutoField | BigAutoField | SmallAutoField) and not f.generated
    )
    quote = connection.ops.quote_name
    head = f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)})"
    return fields, head


def insert_statement(objs: Sequence[Model], *, name: str = "", returning: str = "") -> Statement:
    """One multi-row ``INSERT … VALUES`` for ``objs`` (all of one model); marks them saved.

    Values are filled in as a save would fill them (``auto_now_add`` sets the attribute too).
    """
    model = type(objs[0])
    fields, head = _insert_fields(model)
    row = f"({', '.join(['%s'] * len(fields))})"
    params = [f.get_db_prep_save(f.pre_save(obj, add=True), connection) for obj in objs for f in fields]
    for obj in objs:
        obj._state.adding = False
        obj._state.db = connection.alias
    sql = f"{head} VALUES {', '.join([row] * len(objs))}"
    return Statement(f"{sql} RETURNING {returning}" if returning else sql, params, name)


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
            return
        *parts, last = statements
        with_clause = ", ".join(
            f"{part.name or f'part{index}'} AS ({part.sql})" for index, part in enumerate(parts)
        )
        sql = f"WITH {with_clause} {last.sql}" if parts else last.sql
        cursor.execute(sql, [param for statement in statements for param in statement.params])
