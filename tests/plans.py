"""PostgreSQL's plan for a statement a real request ran, as a flat list of plan nodes."""

import contextlib
import json
from collections.abc import Iterator

import psycopg
from django.db import connection


def plan_nodes(sql: str) -> list[dict]:
    """Every node of ``EXPLAIN (FORMAT JSON)`` for ``sql`` (run with the current statistics)."""
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}")
        plan = cursor.fetchone()[0]
    return list(_nodes((json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]))


def _nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


@contextlib.contextmanager
def statements() -> Iterator[list[str]]:
    """Every statement run inside, its parameters written in.

    Django's query log shows placeholders for a statement bound on the
    server (``core.binary_rows``); its plan needs the values.
    """
    ran: list[str] = []

    def keep(execute, sql, params, many, context):
        written = psycopg.ClientCursor(connection.connection).mogrify(sql, params) if params else sql
        ran.append(written)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        yield ran
