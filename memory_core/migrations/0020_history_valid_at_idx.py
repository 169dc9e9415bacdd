"""Make point-in-time recall (``filters.valid_at``) read history through indexes.

History rows get their own ``search_vector``, computed by a trigger from the revision's content
(the document of ``search.search_document()``, as migration 0006 does for memories), for inserts
by simple-history, by ``core.history.copy_to_history`` and by COPY alike: whatever vector an
insert carries (simple-history copies the one the saved instance holds, which can be stale) is
replaced. ``memory_history_search_vector_gin`` lets the query's words select history rows, and
ranking reads the stored vector instead of parsing each match's text (~55 µs a match, twice).

``memory_history_valid_at_idx``: a memory's history rows newest revision first, with the
columns that decide whether a row is valid at a moment, so "the newest revision valid at t"
is one index-only probe per hit (``recall._as_of``).

History can be large in production and every apply writes to it, so on PostgreSQL the
existing rows are filled in batches of short transactions and both indexes are built
``CONCURRENTLY`` (no lock against the executor's inserts). simple-history builds the historical
model's ``Meta``, so the indexes live here, as the memories' GIN index does (migration 0006).
"""

from django.contrib.postgres.search import SearchVectorField
from django.db import migrations, models

SEARCH_INDEX = "memory_history_search_vector_gin"
VALID_AT_INDEX = "memory_history_valid_at_idx"
KEPT_TYPES = ["+", "~"]  # the rows recall reads: a creation and each change, never a deletion
BATCH = 10_000
DOCUMENT = (
    "to_tsvector('english'::regconfig, COALESCE(NEW.content ->> 'statement', '')"
    " || ' ' || COALESCE(NEW.content ->> 'summary', ''))"
)
TRIGGER = f"""
CREATE OR REPLACE FUNCTION memory_history_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_vector := {DOCUMENT};
    RETURN NEW;
END $$;
CREATE TRIGGER memory_history_search_vector BEFORE INSERT OR UPDATE OF content, search_vector
    ON memory_core_historicalmemory FOR EACH ROW EXECUTE FUNCTION memory_history_search_vector();
"""
DROP_TRIGGER = """
DROP TRIGGER IF EXISTS memory_history_search_vector ON memory_core_historicalmemory;
DROP FUNCTION IF EXISTS memory_history_search_vector();
"""


def _indexes(vendor: str) -> list:
    valid_at = models.Index(
        fields=["id", "-revision", "-history_id"],
        include=["state", "valid_from", "valid_to"],
        condition=models.Q(history_type__in=KEPT_TYPES),
        name=VALID_AT_INDEX,
    )
    if vendor != "postgresql":
        return [valid_at]
    from django.contrib.postgres.indexes import GinIndex

    return [GinIndex(fields=["search_vector"], name=SEARCH_INDEX), valid_at]


def create(apps, schema_editor):
    history = apps.get_model("memory_core", "HistoricalMemory")
    postgres = schema_editor.connection.vendor == "postgresql"
    if postgres:
        schema_editor.execute(TRIGGER)
        _fill(schema_editor)
    for index in _indexes(schema_editor.connection.vendor):
        schema_editor.add_index(history, index, **({"concurrently": True} if postgres else {}))


def _fill(schema_editor) -> None:
    """Compute the vector of every existing history row (the trigger fires on the update)."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(MAX(history_id), 0) FROM memory_core_historicalmemory")
        last = cursor.fetchone()[0]
        for start in range(0, last, BATCH):
            cursor.execute(
                "UPDATE memory_core_historicalmemory SET search_vector = NULL"
                " WHERE history_id > %s AND history_id <= %s",
                [start, start + BATCH],
            )


def drop(apps, schema_editor):
    history = apps.get_model("memory_core", "HistoricalMemory")
    postgres = schema_editor.connection.vendor == "postgresql"
    for index in _indexes(schema_editor.connection.vendor):
        schema_editor.remove_index(history, index, **({"concurrently": True} if postgres else {}))
    if postgres:
        schema_editor.execute(DROP_TRIGGER)


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [("memory_core", "0019_link_to_entity")]
    operations = [
        migrations.AddField(
            model_name="historicalmemory",
            name="search_vector",
            field=SearchVectorField(editable=False, null=True),
        ),
        migrations.RunPython(create, drop),
    ]
