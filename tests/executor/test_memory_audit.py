"""verify_receipts also proves that every memory row, history row and evidence link came through a receipt."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.utils import timezone

from evidence.models import EvidenceRevision
from executor.models import ChainVerification, Receipt, ReceiptChain
from executor.services import run_chain_verification
from memory_core import mutations
from memory_core.models import Memory, MemoryEvidence
from proposals.models import Proposal
from provenance.services import add_evidence_revision, invalidate_evidence_revision
from tests.factories import (
    apply_released,
    approve,
    create_payload,
    make_evidence,
    make_person,
    owner_context,
    submit,
    user_preference,
)
from tests.lifecycle.test_lifecycle_verbs import drive
from tests.workers import connect_as as _connect


def _pk(value):
    return value.hex if connection.vendor == "sqlite" else value


def _sql(statement: str, params=()) -> None:
    """Change rows behind the executor's back, as anyone with write access to the tables could."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement, params)


def _sql_past_triggers(table: str, statement: str, params=()) -> None:
    """Change rows as an owner who lifts the table's triggers first (on PostgreSQL they refuse it)."""
    with transaction.atomic(), connection.cursor() as cursor:
        postgres = connection.vendor == "postgresql"
        if postgres:  # deferred foreign-key checks pending in the test's transaction block ALTER TABLE
            cursor.execute(f'SET CONSTRAINTS ALL IMMEDIATE; ALTER TABLE "{table}" DISABLE TRIGGER USER')
        cursor.execute(statement, params)
        if postgres:
            cursor.execute(f'SET CONSTRAINTS ALL IMMEDIATE; ALTER TABLE "{table}" ENABLE TRIGGER USER')


def _add_link(memory: Memory, revision: int, evidence: EvidenceRevision) -> None:
    _sql(
        "INSERT INTO memory_core_memoryevidence (tenant_id, memory_id, memory_revision, "
        "evidence_revision_id, content_hash) VALUES (%s, %s, %s, %s, %s)",
        [_pk(memory.tenant_id), _pk(memory.id), revision, _pk(evidence.id), evidence.content_hash],
    )


def _broken(match: str) -> str:
    with pytest.raises(CommandError, match=match) as error:
        call_command("verify_receipts")
    return str(error.value)


@pytest.fixture
def revised(agent, applied_memory):
    """A memory at revision 4 with every kind of write behind it.

    Created on evidence A (1); content updated on evidence B, which closes
    revision 1's validity window in history (2); B invalidated, so a fence
    receipt records the fence without a new revision; B corrected, so an
    automatic revalidation rebinds it to B's revision 2 (3); then expired (4).
    """
    evidence = make_evidence(agent.agent)
    update = submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(applied_memory.id),
            "base_revision": 1,
            "changes": {"content": {"statement": "Alice prefers daily summaries now"}},
            "evidence": [evidence.binding()],
            "policy_context": owner_context(),
        },
    )
    assert apply_released(update).outcome == "applied"
    invalidate_evidence_revision(revision=evidence, reason="wrong universe")
    assert apply_released(Proposal.objects.get(action="fence")).outcome == "applied"
    add_evidence_revision(source=evidence.source, agent=agent.agent, content={"fixed": True})
    revalidation = Proposal.objects.get(action="revalidate")
    approve(make_person("revalidator", agent.tenant), revalidation)  # lifting a fence takes a person
    assert apply_released(revalidation).outcome == "applied"
    assert drive(agent, applied_memory, "expire", []).outcome == "applied"
    applied_memory.refresh_from_db()
    assert applied_memory.revision == 4
    assert Memory.history.get(id=applied_memory.id, revision=1).valid_to is not None
    return applied_memory


def test_memories_written_through_the_executor_verify(applied_memory, capsys):
    call_command("verify_receipts")
    assert "1 receipts verified, memories match" in capsys.readouterr().out


def test_every_kind_of_executor_write_verifies(revised, capsys):
    call_command("verify_receipts")
    assert "memories match" in capsys.readouterr().out


def test_a_memory_written_without_a_receipt_is_named(agent, applied_memory):
    rogue = mutations.create_memory(
        memory_id="11111111-1111-4111-8111-111111111111",
        tenant_id=agent.tenant.id,
        fields={
            "subject": {"kind": "user", "id": "x"},
            "scope": "user",
            "type": "profile",
            "content": {"statement": "written behind the executor's back"},
        },
        evidence=[],
        now=timezone.now(),
        change_reason="rogue",
    )
    _broken(f"memory {rogue.id} revision 1 has no applied receipt")


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("confidence", 0.01),
        ("content", '{"statement": "Alice prefers no summaries"}'),
        ("state", "revoked"),
        ("sensitivity", "public"),
        ("expires_at", "2099-01-01 00:00:00"),
        ("tenant_id", None),  # moved to another tenant
    ],
)
def test_a_memory_changed_in_sql_is_named(applied_memory, other_agent, column, value):
    if column == "tenant_id":
        value = _pk(other_agent.tenant.id)
    _sql(f"UPDATE memory_core_memory SET {column} = %s WHERE id = %s", [value, _pk(applied_memory.id)])
    _broken(f"memory {applied_memory.id} (content differs|revision 1 has no applied receipt)")


def test_a_deleted_memory_row_is_named(revised):
    _sql("DELETE FROM memory_core_memoryevidence WHERE memory_id = %s", [_pk(revised.id)])
    _sql("DELETE FROM memory_core_memoryvector WHERE memory_id = %s", [_pk(revised.id)])  # derived
    _sql("DELETE FROM memory_core_memory WHERE id = %s", [_pk(revised.id)])
    _broken(f"memory {revised.id} is missing")


def test_a_memory_deleted_with_all_its_history_and_links_is_named(revised):
    for table, column in [
        ("memory_core_memoryevidence", "memory_id"),
        ("memory_core_memoryvector", "memory_id"),
        ("memory_core_memory", "id"),
        ("memory_core_historicalmemory", "id"),
    ]:
        _sql(f"DELETE FROM {table} WHERE {column} = %s", [_pk(revised.id)])
    _broken(f"memory {revised.id} is missing")


@pytest.mark.parametrize(
    "tables", [["memory_core_memory"], ["memory_core_memory", "memory_core_historicalmemory"]]
)
@pytest.mark.parametrize("step", [1, -1])
def test_a_changed_revision_number_is_named(revised, tables, step):
    for table in tables:
        _sql(
            f"UPDATE {table} SET revision = revision + %s WHERE id = %s AND revision = 4",
            [step, _pk(revised.id)],
        )
    _broken(f"memory {revised.id}")


@pytest.mark.parametrize("table", ["memory_core_memory", "memory_core_historicalmemory"])
@pytest.mark.parametrize("column", ["created_at", "updated_at"])
def test_edited_timestamps_are_named(revised, table, column):
    _sql(
        f"UPDATE {table} SET {column} = %s WHERE id = %s AND revision = 4",
        [
            "2020-01-01 00:00:00+00:00" if connection.vendor == "postgresql" else "2020-01-01 00:00:00",
            _pk(revised.id),
        ],
    )
    _broken(f"memory {revised.id}")


@pytest.mark.parametrize("revision", [1, 2, 3, 4])
@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("confidence", 0.01),
        ("state_reason", "forged"),
        ("valid_to", None),  # reopens a superseded revision's window for recall valid_at
        ("subject_id", "someone-else"),
    ],
)
def test_an_edited_history_row_is_named(revised, revision, column, value):
    if column == "valid_to" and revision != 1:
        value = "2099-01-01 00:00:00"
    _sql(
        f"UPDATE memory_core_historicalmemory SET {column} = %s WHERE id = %s AND revision = %s",
        [value, _pk(revised.id), revision],
    )
    _broken(f"memory {revised.id} revision {revision} differs")


@pytest.mark.parametrize("revision", [1, 2, 3, 4])
def test_a_deleted_history_row_is_named(revised, revision):
    _sql(
        "DELETE FROM memory_core_historicalmemory WHERE id = %s AND revision = %s",
        [_pk(revised.id), revision],
    )
    _broken(f"memory {revised.id} revision {revision} is missing from history")


def test_a_memory_rolled_back_to_an_earlier_revision_is_named(revised):
    """Memory row and history put back to revision 3, as if the expiry never happened."""
    _sql("DELETE FROM memory_core_historicalmemory WHERE id = %s AND revision = 4", [_pk(revised.id)])
    _sql(
        "UPDATE memory_core_memory SET revision = 3, state = 'active', state_reason = '' WHERE id = %s",
        [_pk(revised.id)],
    )
    _broken(f"memory {revised.id}")


@pytest.mark.parametrize("revision", [1, 2, 3])
def test_a_deleted_evidence_link_is_named(revised, revision):
    _sql(
        "DELETE FROM memory_core_memoryevidence WHERE memory_id = %s AND memory_revision = %s",
        [_pk(revised.id), revision],
    )
    _broken(f"memory {revised.id} revision {revision} differs")


def test_an_evidence_link_added_to_a_revision_is_named(agent, revised):
    other = make_evidence(agent.agent)
    _add_link(revised, 4, other)
    _broken(f"memory {revised.id} revision 4 differs")


def test_an_evidence_link_to_a_revision_that_never_existed_is_named(agent, revised):
    other = make_evidence(agent.agent)
    _add_link(revised, 9, other)
    _broken(f"evidence link .* of memory {revised.id} revision 9")


def test_an_evidence_link_moved_to_other_evidence_is_named(agent, revised):
    other = make_evidence(agent.agent)
    _sql(
        "UPDATE memory_core_memoryevidence SET evidence_revision_id = %s, content_hash = %s "
        "WHERE memory_id = %s AND memory_revision = 1",
        [_pk(other.id), other.content_hash, _pk(revised.id)],
    )
    _broken(f"memory {revised.id} revision 1 differs")


def test_edited_evidence_content_is_named(agent, revised):
    cited = MemoryEvidence.objects.filter(memory=revised, memory_revision=1).get().evidence_revision
    _sql_past_triggers(
        "evidence_evidencerevision",
        "UPDATE evidence_evidencerevision SET content = %s WHERE id = %s",
        ['{"ic_mean": 0.5}', _pk(cited.id)],
    )
    _broken(f"evidence {cited.source_id}@{cited.revision} content does not match its hash")


def test_evidence_content_and_hash_edited_together_are_named(agent, revised):
    from core.canonical import digest

    cited = MemoryEvidence.objects.filter(memory=revised, memory_revision=1).get().evidence_revision
    forged = {"ic_mean": 0.5}
    _sql_past_triggers(
        "evidence_evidencerevision",
        "UPDATE evidence_evidencerevision SET content = %s, content_hash = %s WHERE id = %s",
        ['{"ic_mean": 0.5}', digest(forged), _pk(cited.id)],
    )
    _broken(f"memory {revised.id} revision 1: evidence {cited.source_id}@{cited.revision} no longer has")


def test_a_purged_memory_brought_back_is_named(agent, applied_memory):
    from tests.factories import make_person

    reviewers = [make_person("p1", agent.tenant), make_person("p2", agent.tenant)]
    rows = list(Memory.objects.filter(pk=applied_memory.pk).values())
    drive(agent, applied_memory, "delete", [])
    assert drive(agent, applied_memory, "purge", reviewers).outcome == "applied"
    call_command("verify_receipts")
    Memory.objects.bulk_create([Memory(**row) for row in rows])  # no history, no receipt
    _broken(f"memory {applied_memory.id} exists though receipt .* purged it")


def test_a_chain_written_before_memory_hashes_still_verifies_and_checks_content(agent, revised):
    """Receipts from before migration 0006 bind content only; verification keeps checking that."""
    previous = Receipt.GENESIS_HASH
    for receipt in Receipt.objects.order_by("seq"):
        receipt.before_memory_hash = receipt.after_memory_hash = ""
        receipt.prev_hash = previous
        receipt.hash = previous = receipt.compute_hash()
        with transaction.atomic(), connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SET LOCAL session_replication_role = replica")
            cursor.execute(
                "UPDATE executor_receipt SET before_memory_hash = '', after_memory_hash = '', "
                "prev_hash = %s, hash = %s WHERE id = %s",
                [receipt.prev_hash, receipt.hash, _pk(receipt.id)],
            )
    ReceiptChain.objects.update(head_hash=previous)
    call_command("verify_receipts")
    _sql("UPDATE memory_core_memory SET confidence = 0.01 WHERE id = %s", [_pk(revised.id)])
    _broken(f"memory {revised.id} content differs")


def test_a_revision_hashes_the_same_from_its_instance_and_from_either_database(agent):
    """The executor hashes rows read back, the bench seeder hashes instances, the audit hashes rows."""
    from executor.revision_hashes import MEMORY_COLUMNS, memory_hash, stored_columns

    memory = user_preference(valid_from="2026-01-01T00:00:00+02:00", valid_to="2027-01-01T00:00:00.5Z")
    proposal = submit(agent.agent, create_payload(memory, [make_evidence(agent.agent)]))
    receipt = apply_released(proposal)
    instance = Memory.objects.get(pk=proposal.target_id)
    links = [(link.evidence_revision_id, link.content_hash) for link in instance.evidence_links.all()]
    stored = Memory.history.filter(id=instance.id).values_list(*stored_columns()).get()
    from_instance = memory_hash([getattr(instance, column) for column in MEMORY_COLUMNS], links)
    assert memory_hash(stored, links) == from_instance == receipt.after_memory_hash
    assert links and stored[MEMORY_COLUMNS.index("valid_from")] == 1767218400 * 10**6
    call_command("verify_receipts")


def test_auditor_can_verify_chains_from_the_admin(admin_client, applied_memory):
    """The admin queues the verification; the executor's task (run here directly) records it."""
    chain = ReceiptChain.objects.get()
    response = admin_client.post(
        "/admin/executor/receiptchain/",
        {"action": "verify", "_selected_action": [chain.pk]},
        follow=True,
    )
    assert "verification queued" in response.content.decode()
    run_chain_verification(verification_id=ChainVerification.objects.get().pk)
    assert "verified ✓ up to #1" in admin_client.get("/admin/executor/receiptchain/").content.decode()
    assert Memory.objects.count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("role", "statements", "named"),
    [
        (
            "custodian_executor",
            [
                "DELETE FROM memory_core_memoryevidence WHERE memory_id = %(memory)s",
                "DELETE FROM memory_core_memoryvector WHERE memory_id = %(memory)s",  # derived
                "DELETE FROM memory_core_memory WHERE id = %(memory)s",
            ],
            "memory {memory} is missing",
        ),
        (
            "custodian_executor",
            ["UPDATE memory_core_memory SET revision = revision + 1 WHERE id = %(memory)s"],
            "memory {memory}",
        ),
        (
            "custodian_executor",
            ["UPDATE memory_core_historicalmemory SET created_at = now() WHERE id = %(memory)s"],
            "memory {memory} revision 1 differs",
        ),
        (
            "custodian_executor",
            ["DELETE FROM memory_core_historicalmemory WHERE id = %(memory)s AND revision = 1"],
            "memory {memory} revision 1 is missing from history",
        ),
        (
            "custodian_executor",
            ["DELETE FROM memory_core_memoryevidence WHERE memory_id = %(memory)s"],
            "memory {memory} revision 1 differs",
        ),
        (  # no role may edit evidence (grants and a trigger); an owner who lifts the trigger is seen
            None,
            [
                "ALTER TABLE evidence_evidencerevision DISABLE TRIGGER USER",
                "UPDATE evidence_evidencerevision SET content = '{\"ic_mean\": 0.9}'",
                "ALTER TABLE evidence_evidencerevision ENABLE TRIGGER USER",
            ],
            "content does not match its hash",
        ),
    ],
)
def test_direct_edits_through_the_database_roles_are_caught(applied_memory, role, statements, named):
    """The executor role may write memory tables, the owner anything: neither can hide an edit."""
    call_command("setup_db_roles", verbosity=0)
    with _connect(role) as conn:
        for statement in statements:
            conn.execute(statement, {"memory": applied_memory.id})
    _broken(named.format(memory=applied_memory.id))
    assert EvidenceRevision.objects.exists()
