"""``binary_rows``: the tuples Django reads, read in binary on PostgreSQL, one counted statement."""

import struct
import uuid

import pytest
from django.db import connection
from django.db.models import Exists, OuterRef, Subquery
from django.test.utils import CaptureQueriesContext

from core.binary_rows import binary_rows
from memory_core.models import Memory, MemoryEvidence, MemoryVector


@pytest.fixture
def stored(remember):
    """Two memories, one with a vector for its revision."""
    first, second = remember("Alice prefers tea"), remember("Alice prefers weekly summaries")
    packed = struct.pack("4f", 0.5, -0.25, 1.0, 0.0)
    revision = {"memory": first, "memory_revision": first.revision}
    MemoryVector.objects.create(tenant_id=first.tenant_id, embedder="trial", vector=packed, **revision)
    return first, second, packed


def _read(ids):
    vector = MemoryVector.objects.filter(
        memory=OuterRef("pk"), memory_revision=OuterRef("revision"), embedder="trial"
    )
    cited = MemoryEvidence.objects.filter(memory=OuterRef("pk"))
    return (
        Memory.objects.filter(pk__in=ids)
        .annotate(vector=Subquery(vector.values("vector")[:1]), cited=Exists(cited))
        .order_by("created_at")
        .values_list("pk", "revision", "subject_id", "vector", "cited")
    )


def test_it_reads_what_django_reads(stored):
    first, second, packed = stored
    rows = binary_rows(_read([first.id, second.id, uuid.uuid4()]))
    assert [tuple(row) for row in rows] == [tuple(row) for row in _read([first.id, second.id])]
    assert rows[0][:3] == (first.id, first.revision, "pm-alice")
    assert bytes(rows[0][3]) == packed and rows[1][3] is None
    assert rows[0][4] is True


def test_it_is_one_statement_in_the_query_log(stored):
    first, _, _ = stored
    with CaptureQueriesContext(connection) as captured:
        binary_rows(_read([first.id]))
    assert len(captured) == 1
    assert "memory_core_memoryvector" in captured.captured_queries[0]["sql"]


def test_nothing_to_read_asks_nothing(stored):
    with CaptureQueriesContext(connection) as captured:
        assert binary_rows(_read([])) == []
    assert len(captured) == 0


@pytest.mark.postgres
def test_a_search_read_is_never_prepared(stored):
    """Not even where the operator sets a prepare threshold (``OPTIONS``): a prepared statement
    may settle on a generic plan, blind to the words searched for."""
    first, _, _ = stored
    connection.ensure_connection()
    connection.connection.prepare_threshold = 0
    try:
        for _ in range(3):
            binary_rows(_read([first.id]))
    finally:
        connection.connection.prepare_threshold = None
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone()[0] == 0
