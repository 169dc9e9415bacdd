"""Least privilege in the database: the web role cannot write memories or receipts at all."""

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _connect(role: str) -> psycopg.Connection:
    settings = connection.settings_dict
    return psycopg.connect(
        host=settings["HOST"] or "127.0.0.1",
        port=settings["PORT"] or 5432,
        dbname=settings["NAME"],
        user=role,
        autocommit=True,
    )


@pytest.fixture
def roles(applied_memory):
    call_command("setup_db_roles")
    return applied_memory


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE memory_core_memory SET confidence = 0.1",
        "DELETE FROM memory_core_memory",
        "UPDATE memory_core_historicalmemory SET confidence = 0.1",
        "INSERT INTO executor_receiptchain (tenant_id, seq, head_hash) VALUES (gen_random_uuid(), 0, 'x')",
        "UPDATE executor_receipt SET outcome = 'stale'",
    ],
)
def test_web_role_cannot_write_memories_or_receipts(roles, statement):
    with _connect("custodian_web") as web, pytest.raises(psycopg.errors.InsufficientPrivilege):
        web.execute(statement)


def test_web_role_reads_and_writes_what_the_api_needs(roles):
    with _connect("custodian_web") as web:
        assert web.execute("SELECT count(*) FROM memory_core_memory").fetchone()[0] == 1
        web.execute("UPDATE proposals_proposal SET rationale = rationale")


def test_executor_role_writes_memories_but_never_rewrites_receipts_or_decisions(roles):
    with _connect("custodian_executor") as executor:
        executor.execute("UPDATE memory_core_memory SET confidence = confidence")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            executor.execute("DELETE FROM executor_receipt")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            executor.execute("UPDATE reviews_reviewdecision SET reason = 'x'")


def test_decisions_are_append_only_in_the_database(agent):
    from tests.factories import approve, create_payload, factor_fact, make_evidence, make_person, submit

    proposal = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    approve(make_person("pm-db", agent.tenant), proposal)
    with connection.cursor() as cursor, pytest.raises(Exception, match="append-only"):
        cursor.execute("DELETE FROM reviews_reviewdecision")
