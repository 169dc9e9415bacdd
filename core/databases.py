"""The ``DATABASES`` entries settings build from URLs: the primary, behind a pooler or not, and a replica.

Plain functions of their arguments (no Django import): config/settings.py calls them before
Django is configured, and the scaling tests build the same entries for the servers they start.
"""

from typing import Any

import dj_database_url

POOLERS = ("", "transaction")
REPLICA = "replica"
REPLICA_CONNECT_TIMEOUT_SECONDS = 2  # a replica that does not answer is skipped, not waited for
# Every SQLite database, the embedded default's or a ``sqlite://`` URL's: IMMEDIATE takes the write
# lock at BEGIN, so the web process and the worker queue for it (for up to ``timeout`` seconds)
# instead of one failing at once to upgrade a read lock the other blocks ("database is locked").
SQLITE_OPTIONS: dict[str, Any] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}


def primary_database(
    url: str, *, conn_max_age: int, pooler: str = "", statement_budget_ms: int = 0
) -> dict[str, Any]:
    """Return the ``default`` entry for ``url``; ``pooler="transaction"`` for PgBouncer's transaction mode.

    Behind a transaction pooler each transaction may run on another server connection, so
    nothing may live in the session: psycopg's server-side prepared statements and Django's
    server-side (``WITH HOLD``) cursors are turned off, and the statement budget cannot ride on
    the ``options`` startup parameter (PgBouncer refuses it): the pooler's ``connect_query`` or
    the web role's own setting carries it instead (docs/operations.md, Connection pooler).
    """
    if pooler not in POOLERS:
        raise ValueError(f"CUSTODIAN_DB_POOLER must be empty or 'transaction', not {pooler!r}")
    database: dict[str, Any] = dict(dj_database_url.parse(url, conn_max_age=conn_max_age))
    options: dict[str, Any] = database.setdefault("OPTIONS", {})
    if pooler == "transaction":
        options["prepare_threshold"] = None
        database["DISABLE_SERVER_SIDE_CURSORS"] = True
    elif "sqlite" in database["ENGINE"]:  # no statement budget either: SQLite has no such option
        options.update(SQLITE_OPTIONS)
    elif statement_budget_ms:
        options["options"] = f"-c statement_timeout={statement_budget_ms}"
    return database


def replica_database(
    url: str, *, primary: dict[str, Any], pooler: str = "", statement_budget_ms: int = 0
) -> dict[str, Any]:
    """Return the ``replica`` entry: a streaming standby of ``primary``, read only by views that opt in.

    Under test it mirrors the primary's test database (the standby replays its creation).
    """
    database = primary_database(
        url, conn_max_age=primary["CONN_MAX_AGE"], pooler=pooler, statement_budget_ms=statement_budget_ms
    )
    if database["ENGINE"] != primary["ENGINE"] or "postgresql" not in database["ENGINE"]:
        raise ValueError("CUSTODIAN_REPLICA_URL must name a PostgreSQL standby of DATABASE_URL's database")
    database["OPTIONS"]["connect_timeout"] = REPLICA_CONNECT_TIMEOUT_SECONDS
    database["CONN_HEALTH_CHECKS"] = True  # a restarted replica costs one failed check, not a request
    database["TEST"] = {"MIRROR": "default"}
    return database
