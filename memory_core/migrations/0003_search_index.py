"""A GIN index for full-text recall on PostgreSQL (SQLite uses the plain search path)."""

from django.db import migrations

INDEX_NAME = "memory_search_gin"


def _index():
    from django.contrib.postgres.indexes import GinIndex

    from memory_core.search import search_document

    return GinIndex(search_document(), name=INDEX_NAME)


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.add_index(apps.get_model("memory_core", "Memory"), _index())


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.remove_index(apps.get_model("memory_core", "Memory"), _index())


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0002_historicalmemory_state_reason_memory_state_reason")]
    operations = [migrations.RunPython(create, drop)]
