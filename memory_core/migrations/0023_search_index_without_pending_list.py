"""Write the search indexes' entries straight into the GIN tree (``fastupdate = off``).

With GIN's default pending list, rows inserted since the last vacuum sit in an unsorted list
that every search scans in full: right after a conversation is loaded (thousands of turns in a
minute), the planner rightly prefers reading the whole tenant, and a search costs ~7 ms of
matching instead of ~0.4 ms. Each apply now pays for its own index entries (tens of
microseconds a row), so a search costs the same whenever it runs. The pending entries already
there are moved into the tree.
"""

from django.db import migrations

INDEXES = ("memory_search_vector_gin", "memory_history_search_vector_gin")


def forward(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for index in INDEXES:
        schema_editor.execute(f"ALTER INDEX {index} SET (fastupdate = off)")
        schema_editor.execute(f"SELECT gin_clean_pending_list('{index}'::regclass)")


def backward(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for index in INDEXES:
        schema_editor.execute(f"ALTER INDEX {index} RESET (fastupdate)")


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0022_memory_happened_at"),
    ]

    operations = [migrations.RunPython(forward, backward)]
