"""Migration building blocks shared by the apps."""

from collections.abc import Sequence

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
    return postgres_only(_append_only_sql(table, update_allowed_when), _drop_append_only_sql(table))


PSEUDONYM_PATTERN = "^erased:[0-9a-f]{64}$"  # core.pseudonyms: what an erasure writes


def append_only_allowing(
    table: str,
    *,
    pseudonymised: Sequence[str],
    changing: Sequence[str] = (),
    when: str = "TRUE",
    replacing: bool = False,
) -> migrations.RunPython:
    """Return an operation that makes ``table`` append-only but for an erasure's pseudonymising UPDATE.

    An UPDATE goes through only if no column but ``pseudonymised`` and ``changing`` differs,
    and each ``pseudonymised`` column that differs held a clear value and now holds a
    pseudonym (``erased:`` and 64 hex digits), so a person's id can be replaced once and
    never by anything else. ``changing`` names columns the row's own lifecycle moves
    (a grant's revocation), ``when`` a SQL condition on them. ``replacing``: the table
    already has its plain append-only trigger, which this replaces (and going back restores).
    """
    listed = ", ".join(f"'{column}'" for column in (*pseudonymised, *changing))
    conditions = [f"(to_jsonb(NEW) - ARRAY[{listed}]::text[]) = (to_jsonb(OLD) - ARRAY[{listed}]::text[])"]
    for column in pseudonymised:
        conditions.append(
            f"(NEW.{column} IS NOT DISTINCT FROM OLD.{column} OR"
            f" (OLD.{column} !~ '^erased:' AND NEW.{column} ~ '{PSEUDONYM_PATTERN}'))"
        )
    conditions.append(f"({when})")
    up = _append_only_sql(table, " AND ".join(conditions))
    return postgres_only(up, _append_only_sql(table, "") if replacing else _drop_append_only_sql(table))


def _append_only_sql(table: str, update_allowed_when: str) -> str:
    """The function and trigger behind ``append_only_trigger``; (re)creates both."""
    function = f"{table}_append_only"
    allowed = f"IF TG_OP = 'UPDATE' AND ({update_allowed_when}) THEN RETURN NEW; END IF;\n    "
    refuse = f"RAISE EXCEPTION USING MESSAGE = '{table} is append-only (' || TG_OP || ' refused)';"
    return f"""
CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$
BEGIN
    {allowed if update_allowed_when else ""}{refuse}
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS {function} ON {table};
CREATE TRIGGER {function} BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION {function}();
"""


def _drop_append_only_sql(table: str) -> str:
    function = f"{table}_append_only"
    return f"DROP TRIGGER IF EXISTS {function} ON {table}; DROP FUNCTION IF EXISTS {function}();"
