"""The backup runbook (docs/operations.md), run for real: dump, restore into a fresh database, verify.

Memories and receipts come from the real pipeline (proposal, approvals, the executor's service);
``pg_dump -Fc`` and ``pg_restore`` are the server's own; ``manage.py verify_receipts`` runs as
the operator would, with DATABASE_URL naming the restored copy. One receipt changed in the copy
must then fail it.
"""

import os
import subprocess
import sys
from collections.abc import Iterator

import psycopg
import pytest
from django.db import connection

from executor.models import Receipt
from tests import workers
from tests.scaling.conftest import server_bin
from tests.workers import BASE_DIR, connect_as

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _manage(command: str, url: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIAN_DB_POOLER")}
    return subprocess.run(
        [sys.executable, "manage.py", command],
        cwd=BASE_DIR,
        env={**env, "DATABASE_URL": url},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def restored_name() -> Iterator[str]:
    """A fresh database for the restore, dropped afterwards."""
    name = f"{connection.settings_dict['NAME']}_restored"
    with connect_as() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with connect_as() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_restored_dump_verifies_and_a_receipt_changed_in_it_does_not(remember, restored_name, tmp_path):
    for n in range(3):
        remember(f"Alice prefers summaries on day {n + 1}")
    receipts = list(Receipt.objects.order_by("seq"))
    assert len(receipts) == 3
    db = connection.settings_dict
    where = ["-h", "127.0.0.1", "-p", str(db["PORT"] or 5432), "-U", db["USER"]]
    dump = tmp_path / "custodian.dump"
    subprocess.run(
        [server_bin("pg_dump"), *where, "-Fc", "-f", str(dump), db["NAME"]], check=True, timeout=300
    )
    subprocess.run(
        [server_bin("pg_restore"), *where, "--exit-on-error", "-d", restored_name, str(dump)],
        check=True,
        timeout=300,
    )
    restored_url = workers.test_database_url().rsplit("/", 1)[0] + f"/{restored_name}"

    assert _manage("setup_db_roles", restored_url).returncode == 0
    verified = _manage("verify_receipts", restored_url)
    assert verified.returncode == 0, verified.stderr
    assert "3 receipts verified, memories match" in verified.stdout

    with psycopg.connect(restored_url, autocommit=True) as conn, conn.transaction():
        conn.execute("SET LOCAL session_replication_role = replica")  # past the append-only trigger
        conn.execute("UPDATE executor_receipt SET reason = 'forged' WHERE id = %s", [receipts[1].id])
    broken = _manage("verify_receipts", restored_url)
    assert broken.returncode != 0
    assert str(receipts[1].id) in broken.stderr
