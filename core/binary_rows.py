"""Rows of a large read in PostgreSQL's binary format.

Django's psycopg cursor binds parameters on the client, and such a cursor can
only read results as text: a ``bytea`` column arrives as hex, twice its size,
and every number and UUID is parsed from a string. Recall's first stage reads
up to a thousand candidates with a 1 KiB vector each; in binary that read
takes about half as long. The statement still goes through Django's cursor
wrapper, so it is counted, logged and timed like any other, and it becomes a
span as psycopg's other statements do (with its placeholders, never its
parameters).
"""

from typing import Any, Self, cast

import psycopg
from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import QuerySet
from opentelemetry import trace
from psycopg.abc import Params

Row = tuple[Any, ...]
_tracer = trace.get_tracer(__name__)


class _BinaryCursor(psycopg.Cursor[Row]):
    """Binds on the server, reads in binary, and never prepares: a prepared statement may
    settle on a generic plan, blind to the words a search asks for."""

    def execute(
        self,
        query: Any,
        params: Params | None = None,
        *,
        prepare: bool | None = None,
        binary: bool | None = None,
    ) -> Self:
        return super().execute(query, params, prepare=False, binary=True)


def binary_rows(rows: QuerySet[Any, Any]) -> list[Row]:
    """The tuples of a ``values_list`` queryset, read in binary on PostgreSQL.

    psycopg loads each column as its type's Python value; Django's from-db
    converters do not run, so only columns that need none (numbers, text,
    UUIDs, booleans, bytes) may be read this way. Elsewhere, the queryset as is.
    """
    database = connections[rows.db]
    if database.vendor != "postgresql":
        return list(rows)
    try:
        sql, params = rows.query.get_compiler(using=rows.db).as_sql()
    except EmptyResultSet:
        return []
    database.ensure_connection()
    database.validate_thread_sharing()
    wrap = database.make_debug_cursor if database.queries_logged else database.make_cursor
    statement = {"db.system": "postgresql", "db.name": database.settings_dict["NAME"], "db.statement": sql}
    with (
        _tracer.start_as_current_span("SELECT", kind=trace.SpanKind.CLIENT, attributes=statement),
        wrap(cast(Any, _BinaryCursor(database.connection))) as wrapped,  # the stubs expect Django's wrapper
    ):
        wrapped.execute(sql, params)
        fetched: list[Row] = wrapped.fetchall()
    return fetched
