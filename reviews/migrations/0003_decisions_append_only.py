"""Make review decisions append-only in PostgreSQL itself, like receipts."""

from django.db import migrations

UP = """
CREATE OR REPLACE FUNCTION reviews_decision_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION USING MESSAGE = 'reviews_reviewdecision is append-only (' || TG_OP || ' refused)';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER reviews_decision_append_only
    BEFORE UPDATE OR DELETE ON reviews_reviewdecision
    FOR EACH ROW EXECUTE FUNCTION reviews_decision_append_only();
"""
DOWN = """
DROP TRIGGER IF EXISTS reviews_decision_append_only ON reviews_reviewdecision;
DROP FUNCTION IF EXISTS reviews_decision_append_only();
"""


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(UP)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DOWN)


class Migration(migrations.Migration):
    dependencies = [("reviews", "0002_groups")]
    operations = [migrations.RunPython(install, uninstall)]
