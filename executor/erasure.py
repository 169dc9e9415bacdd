"""What an erasure certifies: what it removed, that nothing of it is left, and which exports held it.

The executor builds the certificate inside the erasure's transaction, after every
purge, so the scan reads the rows exactly as they commit. The scan looks for the
subject's id and for the text the erased memories held (each string of their
content, their dedupe keys) in every column of every table the database has, found
by introspection, so a table added later is scanned without anyone listing it; a
table with a tenant column is read for this tenant's rows only. The certificate
names memories by id, revision and content hash and tables by name, never a value; the
authority records pseudonymised (``executor.pseudonymising``) by table and row id.
"""

from collections.abc import Iterable, Iterator
from typing import Any

from django.db import connection

from core.keyed import keyed_digest
from executor.models import TenantExport
from memory_core.models import Memory

# Where a subject's id may stay by design: none. The records of authority that named them (grants,
# decisions made for them, their history, the admin's log) name them by pseudonym after the
# erasure (``executor.pseudonymising``), so the scan finds them nowhere; ``retained`` stays in the
# certificate, empty, so certificates read alike whenever they were made.
RETAINED: dict[str, set[str]] = {}
MIN_TRACE_CHARS = 8  # shorter strings ("weekly", "user") are in rows that never held the subject
PATTERNS_PER_QUERY = 50


def traces(memory: Memory) -> set[str]:
    """The text of ``memory`` a copy elsewhere would repeat: its content's strings and its dedupe key."""
    return long_enough({memory.dedupe_key, *strings(memory.content)})


def long_enough(texts: Iterable[str]) -> set[str]:
    """The texts worth looking for: shorter ones are in rows that never held what was erased."""
    return {text for text in texts if len(text) >= MIN_TRACE_CHARS}


def strings(value: Any) -> Iterator[str]:
    """Every string in ``value``, a JSON document, at any depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def scan(tenant_id: Any, values: Iterable[str]) -> dict[str, Any]:
    """Return which columns of which tables still hold any of ``values``, and what was read.

    ``found`` is what should not be there; ``retained`` the columns of :data:`RETAINED`
    that hold it by design (none: authority records are pseudonymised before the scan). One query a table (its
    columns joined by OR), and one a column only for a table that holds something;
    LIKE patterns escaped, so an id with ``%`` or ``_`` is literal.
    """
    patterns = sorted({f"%{_escaped(value)}%" for value in values if value})
    found: dict[str, list[str]] = {}
    retained: dict[str, list[str]] = {}
    columns_read = 0
    with connection.cursor() as cursor:
        tables = sorted(connection.introspection.table_names(cursor))
        for table in tables:
            columns = [c.name for c in connection.introspection.get_table_description(cursor, table)]
            columns_read += len(columns)
            if not (patterns and _holds(cursor, table, columns, patterns, tenant_id)):
                continue
            for column in columns:
                if _holds(cursor, table, [column], patterns, tenant_id):
                    kept = column in RETAINED.get(table, ())
                    (retained if kept else found).setdefault(table, []).append(column)
    return {
        "tables": len(tables),
        "columns": columns_read,
        "values": len(patterns),
        "found": found,
        "retained": retained,
    }


def _holds(cursor: Any, table: str, columns: list[str], patterns: list[str], tenant_id: Any) -> bool:
    quote = connection.ops.quote_name
    scoped = "tenant_id" in _column_names(cursor, table)
    for start in range(0, len(patterns), PATTERNS_PER_QUERY):
        chunk = patterns[start : start + PATTERNS_PER_QUERY]
        tests = " OR ".join(
            f"CAST({quote(column)} AS TEXT) LIKE %s ESCAPE '\\'" for column in columns for _ in chunk
        )
        where = f"({tests})" + (" AND tenant_id = %s" if scoped else "")
        params: list[Any] = [pattern for _ in columns for pattern in chunk]
        if scoped:
            params.append(_tenant_key(tenant_id))
        # Table and column names come from the database's own catalogue, quoted; values are parameters.
        cursor.execute(f"SELECT 1 FROM {quote(table)} WHERE {where} LIMIT 1", params)  # noqa: S608
        if cursor.fetchone():
            return True
    return False


_COLUMNS: dict[str, set[str]] = {}


def _column_names(cursor: Any, table: str) -> set[str]:
    if table not in _COLUMNS:
        _COLUMNS[table] = {c.name for c in connection.introspection.get_table_description(cursor, table)}
    return _COLUMNS[table]


def _tenant_key(tenant_id: Any) -> Any:
    """A tenant id as the database stores it (SQLite keeps a UUID as 32 hex digits)."""
    return tenant_id.hex if connection.vendor == "sqlite" else tenant_id


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def exports_holding(tenant_id: Any, memories: list[Memory]) -> list[dict[str, Any]]:
    """The tenant exports written while any of ``memories`` existed: they hold its content still."""
    if not memories:
        return []
    since = min(memory.created_at for memory in memories)
    held = TenantExport.objects.filter(tenant_id=tenant_id, exported_at__gte=since).order_by("exported_at")
    return [
        {
            "export_id": str(export.pk),
            "exported_at": export.exported_at.isoformat(),
            "exported_by": export.exported_by,
            "head_seq": export.head_seq,
        }
        for export in held
    ]


def subject_digest(subject: dict[str, str]) -> dict[str, str]:
    """Name an erased subject as the certificate and the scrubbed proposal keep it: a keyed digest."""
    return {"kind": subject["kind"], "id_digest": keyed_digest("erased-subject", subject["id"])}
