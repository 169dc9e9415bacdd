"""Access events and their items are append-only in PostgreSQL, for every role.

One UPDATE is let through: blanking an event's ``query`` and nothing else,
which is how a purge removes a purged memory's words from the searches that
served it (subject ids never reach these rows in clear; see recall.py).
"""

from django.db import migrations

from core.migrations_util import append_only_trigger

QUERY_SCRUB_ONLY = "NEW.query = '' AND (to_jsonb(NEW) - 'query') = (to_jsonb(OLD) - 'query')"


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0006_memory_search_vector")]
    operations = [
        append_only_trigger("memory_core_accessevent", update_allowed_when=QUERY_SCRUB_ONLY),
        append_only_trigger("memory_core_accesseventitem"),
    ]
