"""Make receipts append-only in PostgreSQL itself, not only in the ORM.

TRUNCATE is left to privileges (the application role should not hold it),
since test runs flush tables with it. The embedded SQLite default is a
development mode and relies on the ORM guard alone.
"""

from django.db import migrations

UP = """
CREATE OR REPLACE FUNCTION executor_receipt_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION USING MESSAGE = 'executor_receipt is append-only (' || TG_OP || ' refused)';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER executor_receipt_append_only
    BEFORE UPDATE OR DELETE ON executor_receipt
    FOR EACH ROW EXECUTE FUNCTION executor_receipt_append_only();
"""
DOWN = """
DROP TRIGGER IF EXISTS executor_receipt_append_only ON executor_receipt;
DROP FUNCTION IF EXISTS executor_receipt_append_only();
"""


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(UP)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DOWN)


class Migration(migrations.Migration):
    dependencies = [("executor", "0001_initial")]
    operations = [migrations.RunPython(install, uninstall)]
