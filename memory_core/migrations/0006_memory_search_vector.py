"""Store each memory's search vector, computed by a PostgreSQL trigger, and index that.

Ranking with ``ts_rank`` over the indexed expression (migration 0003)
re-parsed every matching memory's text at query time, so recall cost grew
with the number of matches (about 55 µs a match). The trigger computes the
same document as ``memory_core.search.search_document()`` once per write,
for inserts by the ORM and by COPY alike. SQLite keeps the column empty
and searches with its plain path.
"""

from django.contrib.postgres.search import SearchVectorField
from django.db import migrations

from core.migrations_util import postgres_only

DOCUMENT = (
    "to_tsvector('english'::regconfig, COALESCE(NEW.content ->> 'statement', '')"
    " || ' ' || COALESCE(NEW.content ->> 'summary', ''))"
)
FORWARD = f"""
CREATE FUNCTION memory_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_vector := {DOCUMENT};
    RETURN NEW;
END $$;
CREATE TRIGGER memory_search_vector BEFORE INSERT OR UPDATE OF content, search_vector
    ON memory_core_memory FOR EACH ROW EXECUTE FUNCTION memory_search_vector();
UPDATE memory_core_memory SET search_vector = NULL;
CREATE INDEX memory_search_vector_gin ON memory_core_memory USING gin (search_vector);
DROP INDEX IF EXISTS memory_search_gin;
"""
BACKWARD = f"""
DROP INDEX IF EXISTS memory_search_vector_gin;
DROP TRIGGER IF EXISTS memory_search_vector ON memory_core_memory;
DROP FUNCTION IF EXISTS memory_search_vector();
CREATE INDEX memory_search_gin ON memory_core_memory USING gin (({DOCUMENT.replace("NEW.", "")}));
"""


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0005_memory_memory_ttl_idx")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="search_vector",
            field=SearchVectorField(editable=False, null=True),
        ),
        postgres_only(FORWARD, BACKWARD),
    ]
