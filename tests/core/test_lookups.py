"""``field__any``: the same rows as ``__in``, with the list as one array parameter on PostgreSQL."""

import uuid

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_core.models import Memory, MemoryEvidence


def test_any_selects_what_in_selects(remember):
    first, second = remember("Alice prefers tea"), remember("Alice prefers weekly summaries")
    wanted = [first.id, second.id, uuid.uuid4(), None, first.id]
    assert (
        set(Memory.objects.filter(pk__any=wanted))
        == set(Memory.objects.filter(pk__in=wanted))
        == {
            first,
            second,
        }
    )
    assert not Memory.objects.filter(pk__any=[]).exists()
    assert list(Memory.objects.filter(pk__any=[None])) == []


def test_any_sends_one_parameter_on_postgresql(remember, db):
    memory = remember("Alice prefers tea")
    with CaptureQueriesContext(connection) as captured:
        list(Memory.objects.filter(pk__any=[memory.id, uuid.uuid4(), uuid.uuid4()]))
    sql = captured.captured_queries[-1]["sql"]
    if connection.vendor == "postgresql":
        assert "= ANY(" in sql and " IN (" not in sql
    else:
        assert " IN (" in sql


def test_any_on_a_foreign_key_takes_ids(remember):
    memory = remember("Alice prefers tea")
    links = MemoryEvidence.objects.filter(memory_id__any=[memory.id, uuid.uuid4()])
    assert {link.memory_id for link in links} == {memory.id}
    assert links.count() == MemoryEvidence.objects.filter(memory_id__in=[memory.id]).count() > 0
