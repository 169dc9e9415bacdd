"""The refusal audit trail: rows are counted in place, never rewritten otherwise, never deleted."""

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection
from rest_framework.test import APIClient

from tenancy.models import DeniedRequest
from tests import workers
from tests.workers import connect_as as _connect

ATTACKER = "203.0.113.7"


@pytest.fixture
def denied(db) -> DeniedRequest:
    assert APIClient(REMOTE_ADDR=ATTACKER).get("/api/v1/proposals/").status_code == 401
    return DeniedRequest.objects.get()


def test_the_orm_only_ever_counts_a_refusal(denied):
    with pytest.raises(TypeError):
        DeniedRequest.objects.update(path="/elsewhere/")
    with pytest.raises(TypeError):
        DeniedRequest.objects.all().delete()
    with pytest.raises(TypeError):
        denied.delete()
    denied.path = "/elsewhere/"
    with pytest.raises(TypeError):
        denied.save()
    assert DeniedRequest.objects.get().path == "/api/v1/proposals/"


# --- PostgreSQL: grants and the trigger, as the real roles -----------------------------------------


@pytest.fixture
def roles(denied):
    call_command("setup_db_roles", verbosity=0)
    return denied


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_web_role_counts_refusals_but_cannot_delete_them(roles):
    with _connect("custodian_web") as web:
        web.execute("UPDATE tenancy_deniedrequest SET count = count + 1, last_seen_at = now()")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            web.execute("DELETE FROM tenancy_deniedrequest")
    assert DeniedRequest.objects.get().count == 2


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "assignment",
    [
        "path = '/elsewhere/'",
        "status = 200",
        "caller = 'addr:198.51.100.1'",
        "remote_addr = '198.51.100.1'",
        "created_at = created_at - interval '1 day'",
        "window_start = window_start + interval '1 day'",
        "count = 0",
        "last_seen_at = last_seen_at - interval '1 day'",
    ],
)
def test_only_the_counter_of_a_refusal_may_change(roles, assignment):
    with _connect("custodian_web") as web, pytest.raises(psycopg.errors.RaiseException, match="counter"):
        web.execute(f"UPDATE tenancy_deniedrequest SET {assignment}")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_not_even_the_owner_deletes_a_refusal(denied):
    with connection.cursor() as cursor, pytest.raises(Exception, match="never deleted"):
        cursor.execute("DELETE FROM tenancy_deniedrequest")


WEB_PROCESS = """
import django
django.setup()
from rest_framework.test import APIClient
from tenancy.models import DeniedRequest
client = APIClient(REMOTE_ADDR="198.51.100.77")
for _ in range(3):
    assert client.get("/api/v1/proposals/").status_code == 401
row = DeniedRequest.objects.get(caller="addr:198.51.100.77")
print(row.count)
"""


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_web_process_connected_as_its_role_records_and_counts_refusals(roles):
    env = {
        **os.environ,
        "DATABASE_URL": workers.test_database_url("custodian_web"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    result = subprocess.run(
        [sys.executable, "-c", WEB_PROCESS],
        cwd=workers.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "3"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_simultaneous_first_refusals_share_one_row():
    """Each thread has its own connection; whoever inserts second counts on the first one's row."""
    threads = 8
    barrier = threading.Barrier(threads)

    def refuse() -> int:
        try:
            barrier.wait(timeout=30)
            return APIClient(REMOTE_ADDR=ATTACKER).get("/api/v1/proposals/").status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(threads) as pool:
        statuses = list(pool.map(lambda _: refuse(), range(threads)))
    assert statuses == [401] * threads
    row = DeniedRequest.objects.get()
    assert (row.caller, row.count) == (f"addr:{ATTACKER}", threads)
