"""MGP events are append-only in PostgreSQL, for every role, as access events are.

One UPDATE is let through: blanking an event's ``target`` and nothing else,
which is how a purge removes the purged memory's MGP id from the refusals
that named it.
"""

from django.db import migrations

from core.migrations_util import append_only_trigger

TARGET_SCRUB_ONLY = "NEW.target = '' AND (to_jsonb(NEW) - 'target') = (to_jsonb(OLD) - 'target')"


class Migration(migrations.Migration):
    dependencies = [("mgp", "0002_task_acting_for")]
    operations = [append_only_trigger("mgp_mgpevent", update_allowed_when=TARGET_SCRUB_ONLY)]
