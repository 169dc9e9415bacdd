"""Migration building blocks shared by the apps."""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def postgres_only(up: str, down: str) -> migrations.RunPython:
    """Return an operation that runs SQL on PostgreSQL only (SQLite, for ``make run``, does without)."""

    def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(up)

    def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(down)

    return migrations.RunPython(forward, backward)


def append_only_trigger(table: str, *, update_allowed_when: str = "") -> migrations.RunPython:
    """Return an operation that makes ``table`` refuse UPDATE and DELETE in PostgreSQL, for every role.

    ``update_allowed_when`` is a SQL condition on ``OLD`` and ``NEW`` under
    which an UPDATE goes through: the one change the table permits (e.g. a
    purge scrub). TRUNCATE is left to privileges (the application roles do not
    hold it), since test runs flush tables with it. SQLite relies on the ORM guard.
    """
    function = f"{table}_append_only"
    allowed = f"IF TG_OP = 'UPDATE' AND ({update_allowed_when}) THEN RETURN NEW; END IF;\n    "
    refuse = f"RAISE EXCEPTION USING MESSAGE = '{table} is append-only (' || TG_OP || ' refused)';"
    up = f"""
CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$
BEGIN
    {allowed if update_allowed_when else ""}{refuse}
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER {function} BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION {function}();
"""
    down = f"DROP TRIGGER IF EXISTS {function} ON {table}; DROP FUNCTION IF EXISTS {function}();"
    return postgres_only(up, down)
