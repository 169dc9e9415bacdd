"""A row that records an authority decision is written only by the role that made the decision.

The web role drafts registrations and queues chain verifications; only the
executor publishes a registration or records a verification's result. Every
table has an explicit grant decision, and each role holds exactly the writes
``setup_db_roles`` lists for it.
"""

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from executor.management.commands.setup_db_roles import EXECUTOR_WRITES, GRANTS, READ_ONLY, WEB_WRITES
from tests.workers import connect_as

REFUSED = (psycopg.errors.InsufficientPrivilege, psycopg.errors.RaiseException)
WEB = "custodian_web"
REGISTRATION = (
    "INSERT INTO registrations_registration (id, tenant_id, status, version, base_version, document,"
    " fingerprint, validation, created_by, created_at, updated_at, published_at, receipt_id)"
    " VALUES (gen_random_uuid(), %s, {status}, {version}, 1, '{{}}', repeat('0', 64), '{{}}', 'op',"
    " now(), now(), {published_at}, {receipt_id})"
)
VERIFICATION = (
    "INSERT INTO executor_chainverification (id, tenant_id, requested_by, requested_at, status, started_at,"
    " finished_at, head_seq, receipts, total, problems) VALUES (gen_random_uuid(), %s, 'auditor', now(),"
    " {status}, {started_at}, {finished_at}, {head_seq}, {receipts}, {total}, {problems})"
)
DRAFT = {"status": "'draft'", "version": "NULL", "published_at": "NULL", "receipt_id": "NULL"}
QUEUED = {
    "status": "'queued'",
    "started_at": "NULL",
    "finished_at": "NULL",
    "head_seq": "NULL",
    "receipts": "0",
    "total": "0",
    "problems": "'[]'",
}


@pytest.fixture
def roles(db):
    call_command("setup_db_roles", verbosity=0)


def _registration(**forged) -> str:
    return REGISTRATION.format(**{**DRAFT, **forged})


def _verification(**forged) -> str:
    return VERIFICATION.format(**{**QUEUED, **forged})


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "statement",
    [
        _registration(status="'active'", version="2", published_at="now()"),
        _registration(status="'active'"),
        _registration(status="'superseded'", version="2"),
        _registration(version="7"),
        _registration(published_at="now()"),
        _registration(receipt_id="gen_random_uuid()"),
    ],
    ids=["active-published", "active", "superseded", "version", "published_at", "receipt_id"],
)
def test_the_web_role_cannot_insert_a_published_registration(roles, agent, statement):
    with connect_as(WEB) as web, pytest.raises(REFUSED):
        web.execute(statement, [agent.tenant.id])
    assert not connection.cursor().execute("SELECT 1 FROM registrations_registration").fetchall()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "statement",
    [
        _verification(status="'ok'", finished_at="now()", head_seq="3", receipts="3", total="3"),
        _verification(status="'ok'"),
        _verification(status="'broken'", problems="'[\"forged\"]'"),
        _verification(status="'running'", started_at="now()"),
        _verification(finished_at="now()"),
        _verification(receipts="5"),
        _verification(problems="'[\"forged\"]'"),
    ],
    ids=["ok-finished", "ok", "broken", "running", "finished_at", "receipts", "problems"],
)
def test_the_web_role_cannot_insert_a_chain_verification_result(roles, agent, statement):
    with connect_as(WEB) as web, pytest.raises(REFUSED):
        web.execute(statement, [agent.tenant.id])
    assert not connection.cursor().execute("SELECT 1 FROM executor_chainverification").fetchall()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_web_role_drafts_a_registration_and_queues_a_verification(roles, agent):
    with connect_as(WEB) as web:
        web.execute(_registration(), [agent.tenant.id])
        web.execute(_verification(), [agent.tenant.id])


@pytest.mark.django_db
def test_every_table_has_an_explicit_grant_decision():
    tables = set(connection.introspection.table_names())
    decided = set(WEB_WRITES) | set(EXECUTOR_WRITES) | READ_ONLY
    assert sorted(tables - decided) == []  # a new table: decide its grants in setup_db_roles
    assert sorted(decided - tables) == []  # a dropped table: remove it there


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_each_role_holds_exactly_the_writes_listed_for_it(roles):
    for role, writes in GRANTS.items():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT DISTINCT table_name FROM information_schema.table_privileges WHERE grantee = %s"
                " AND privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE')"
                " UNION SELECT DISTINCT table_name FROM information_schema.column_privileges"
                " WHERE grantee = %s AND privilege_type IN ('INSERT', 'UPDATE')",
                [role, role],
            )
            written = {table for (table,) in cursor.fetchall()}
        assert written == set(writes), role
