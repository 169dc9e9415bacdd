"""Count refusals in place: one DeniedRequest row per (window, caller, status, code).

Rows from before keep one row each (caller ``legacy:<id>``, their own instant as window).
On PostgreSQL a trigger refuses DELETE, and any UPDATE but a rising ``count``/``last_seen_at``.
"""

import django.utils.timezone
from django.db import migrations, models
from django.db.models.functions import Cast, Concat

from core.migrations_util import postgres_only

TABLE = "tenancy_deniedrequest"
COUNTER_ONLY = f"""
CREATE OR REPLACE FUNCTION {TABLE}_counter_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION USING MESSAGE = '{TABLE} rows are never deleted (DELETE refused)';
    END IF;
    IF to_jsonb(NEW) - 'count' - 'last_seen_at' IS DISTINCT FROM to_jsonb(OLD) - 'count' - 'last_seen_at'
       OR NEW.count < OLD.count OR NEW.last_seen_at < OLD.last_seen_at THEN
        RAISE EXCEPTION USING MESSAGE =
            '{TABLE}: only the counter (count, last_seen_at) may change, and only upward';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER {TABLE}_counter_only BEFORE UPDATE OR DELETE ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION {TABLE}_counter_only();
"""
DROP_COUNTER_ONLY = f"""
DROP TRIGGER IF EXISTS {TABLE}_counter_only ON {TABLE};
DROP FUNCTION IF EXISTS {TABLE}_counter_only();
"""


def fill_existing_rows(apps, schema_editor):
    DeniedRequest = apps.get_model("tenancy", "DeniedRequest")
    DeniedRequest.objects.update(
        window_start=models.F("created_at"),
        last_seen_at=models.F("created_at"),
        caller=Concat(models.Value("legacy:"), Cast("id", output_field=models.CharField())),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("tenancy", "0006_deniedrequest"),
    ]

    operations = [
        migrations.AddField(
            model_name="deniedrequest",
            name="window_start",
            field=models.DateTimeField(default=django.utils.timezone.now),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="deniedrequest",
            name="caller",
            field=models.CharField(default="", max_length=100),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="deniedrequest",
            name="count",
            field=models.PositiveIntegerField(default=1),
        ),
        migrations.AddField(
            model_name="deniedrequest",
            name="last_seen_at",
            field=models.DateTimeField(default=django.utils.timezone.now),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="deniedrequest",
            name="created_at",
            field=models.DateTimeField(default=django.utils.timezone.now, editable=False),
        ),
        migrations.RunPython(fill_existing_rows, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="deniedrequest",
            constraint=models.UniqueConstraint(
                fields=("window_start", "caller", "status", "code"), name="denied_one_row_per_window"
            ),
        ),
        postgres_only(COUNTER_ONLY, DROP_COUNTER_ONLY),
    ]
