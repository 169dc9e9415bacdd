"""PostgreSQL's plan for a statement a real request ran, as a flat list of plan nodes."""

import json

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
