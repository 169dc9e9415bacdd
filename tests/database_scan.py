"""Find where a value is stored: every column of every table the database has, found by introspection."""

from django.db import connection


def columns_holding(value: str) -> dict[str, list[str]]:
    """Return ``{table: [columns]}`` for every column of any row whose text mentions ``value``.

    Each column is cast to text in SQL (JSON, UUIDs, numbers and arrays alike), so a
    table or column added later is scanned without anyone listing it here.
    """
    hits: dict[str, list[str]] = {}
    with connection.cursor() as cursor:
        for table in sorted(connection.introspection.table_names(cursor)):
            for column in connection.introspection.get_table_description(cursor, table):
                name = connection.ops.quote_name(column.name)
                cursor.execute(
                    f"SELECT 1 FROM {connection.ops.quote_name(table)}"
                    f" WHERE CAST({name} AS TEXT) LIKE %s LIMIT 1",
                    [f"%{value}%"],
                )
                if cursor.fetchone():
                    hits.setdefault(table, []).append(column.name)
    return hits


def tables_holding(value: str) -> list[str]:
    """Return the tables in which any column of any row mentions ``value``."""
    return sorted(columns_holding(value))
