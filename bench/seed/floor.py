"""The floor: how fast PostgreSQL alone takes the rows ``seed_applied_memories`` writes.

Apart because it times bare psycopg with no Django in the loop, the
yardstick for the seeders' throughput.
"""

import time
from dataclasses import dataclass
from datetime import timedelta

import psycopg
from django.db import connection
from django.utils import timezone
from psycopg import sql

from bench.seed.applied import _applied_rows
from bench.seed.rows import _copy_statement, _plan, _row
from bench.seed.world import _World
from bench.seed.writer import _chain_receipts
from bench.textgen import TextGenerator
from evidence.models import EvidenceRevision
from executor.models import Receipt, ReceiptChain
from tenancy.models import Agent, Tenant


@dataclass(frozen=True)
class FloorRows:
    """Rows exactly as ``seed_applied_memories`` would write them, as plain tuples per table."""

    memories: int
    tables: list[tuple[str, tuple[str, ...], list[tuple]]]

    @property
    def rows(self) -> int:
        return sum(len(rows) for _, _, rows in self.tables)


@dataclass(frozen=True)
class FloorResult:
    memories: int
    rows: int
    seconds: float

    @property
    def memories_per_second(self) -> float:
        return self.memories / self.seconds

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds


def floor_rows(
    *, tenant: Tenant, agent: Agent, evidence: list[EvidenceRevision], count: int, text: TextGenerator
) -> FloorRows:
    """Build, untimed, the rows ``seed_applied_memories`` would write for ``count`` memories.

    The floor functions then write these same rows with no Django and no row
    building in the timed loop, so "seeding at X % of the floor" compares
    like with like. The receipts continue the tenant's chain as it is now.
    """
    world = _World(tenant=tenant, agent=agent, evidence=evidence, text=text)
    head = ReceiptChain.objects.filter(tenant=tenant).first() or ReceiptChain(tenant=tenant)
    now = timezone.now()
    step = timedelta(milliseconds=1)
    rows = _applied_rows(world, text.reserve(count), first_at=now, step=step)
    _chain_receipts(rows[Receipt], head)
    tables, memo = [], {}
    for model, instances in rows.items():
        table, columns, getters, json_columns = _plan(model)
        tables.append((table, columns, [tuple(_row(obj, getters, json_columns, memo)) for obj in instances]))
    return FloorRows(memories=count, tables=tables)


def floor_copy(*, table_rows: FloorRows, dsn: str | None = None) -> FloorResult:
    """Time writing ``table_rows`` with COPY on a bare psycopg connection, then roll it all back."""
    return _floor(table_rows, dsn, _write_copy)


def floor_executemany(*, table_rows: FloorRows, dsn: str | None = None) -> FloorResult:
    """Time writing ``table_rows`` with ``executemany`` (psycopg pipelines it), then roll it all back."""
    return _floor(table_rows, dsn, _write_executemany)


def _write_copy(cursor, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    with cursor.copy(_copy_statement(table, columns)) as copy:
        for row in rows:
            copy.write_row(row)


def _write_executemany(cursor, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    statement = sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
        sql.Identifier(table),
        sql.SQL(", ").join(map(sql.Identifier, columns)),
        sql.SQL(", ").join(sql.Placeholder() * len(columns)),
    )
    cursor.executemany(statement, rows)


def _floor(table_rows: FloorRows, dsn: str | None, write) -> FloorResult:
    """Write the rows in one transaction, timed, then roll it back.

    Rolling back leaves nothing behind (only dead tuples for vacuum), so the
    same rows can be written by both methods. The deferred foreign keys are
    made immediate so their checks are inside the timing, as the commit of
    a seeding batch includes them.
    """
    with psycopg.connect(dsn or _dsn()) as conn, conn.cursor() as cursor:
        try:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            started = time.perf_counter()
            for table, columns, rows in table_rows.tables:
                write(cursor, table, columns, rows)
            cursor.execute("SELECT 1")  # wait for the server to finish the last write
            seconds = time.perf_counter() - started
        finally:
            conn.rollback()
    return FloorResult(memories=table_rows.memories, rows=table_rows.rows, seconds=seconds)


def _dsn() -> str:
    """Return a libpq connection string for Django's database (whatever the test runner named it)."""
    settings = connection.settings_dict
    parts = {
        "dbname": settings["NAME"],
        "user": settings.get("USER"),
        "password": settings.get("PASSWORD"),
        "host": settings.get("HOST"),
        "port": settings.get("PORT"),
    }
    return psycopg.conninfo.make_conninfo(**{key: value for key, value in parts.items() if value})
