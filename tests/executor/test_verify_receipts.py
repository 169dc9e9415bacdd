"""verify_receipts recomputes every chain and names the first tampered receipt."""

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction

from executor.models import Receipt


@pytest.fixture
def chain(agent, applied_memory_factory):
    """Three applied receipts in one tenant's chain."""
    for _ in range(3):
        applied_memory_factory(agent)
    return list(Receipt.objects.order_by("seq"))


def _tamper(sql: str, params: list) -> None:
    """Change a receipt row behind the application's back, as a DBA could."""
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = replica")  # bypass the trigger
        cursor.execute(sql, params)


def test_an_intact_chain_verifies(chain, capsys):
    call_command("verify_receipts")
    assert "3 receipts verified" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("outcome", "stale"),
        ("reason", "nothing to see"),
        ("memory_id", "00000000-0000-4000-8000-000000000000"),
        ("after_revision", 9),
        ("after_content_hash", "f" * 64),
        ("after_memory_hash", "e" * 64),
        ("before_memory_hash", "e" * 64),
        ("action_digest", "a" * 64),
        ("policy_fingerprint", "b" * 64),
        ("decision_ids", '["forged"]'),
        ("evidence", "[]"),
        ("executor", '{"host": "elsewhere"}'),
        ("created_at", "2020-01-01T00:00:00+00:00"),
        ("prev_hash", "c" * 64),
    ],
)
def test_tampering_with_any_column_is_detected_and_named(chain, column, value):
    victim = chain[1]
    _tamper(
        f"UPDATE executor_receipt SET {column} = %s WHERE id = %s",
        [value, victim.id.hex if connection.vendor == "sqlite" else victim.id],
    )
    with pytest.raises(CommandError) as error:
        call_command("verify_receipts")
    assert str(victim.id) in str(error.value)


def test_recomputing_one_hash_still_breaks_the_next_link(chain):
    victim = chain[0]
    victim.outcome = "stale"
    forged_hash = victim.compute_hash()
    _tamper(
        "UPDATE executor_receipt SET outcome = %s, hash = %s WHERE id = %s",
        ["stale", forged_hash, victim.id.hex if connection.vendor == "sqlite" else victim.id],
    )
    with pytest.raises(CommandError) as error:
        call_command("verify_receipts")
    assert str(chain[1].id) in str(error.value)


def test_deleting_the_last_receipt_is_detected(chain):
    _tamper(
        "DELETE FROM executor_receipt WHERE id = %s",
        [chain[-1].id.hex if connection.vendor == "sqlite" else chain[-1].id],
    )
    with pytest.raises(CommandError, match="chain head"):
        call_command("verify_receipts")


@pytest.mark.postgres
def test_database_refuses_updates_to_receipts(chain):
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("UPDATE executor_receipt SET outcome = 'stale'")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("tampered", [None, 0, 4, 7, "memory", "history", "link"])
def test_parallel_verification_agrees_with_the_sequential_one(
    agent, applied_memory_factory, monkeypatch, tampered
):
    """Big tenants are verified in forked processes over seq and id ranges; the verdict must not change."""
    from executor import verification

    for _ in range(8):
        applied_memory_factory(agent)
    receipts = list(Receipt.objects.order_by("seq"))
    memory_id = max(receipt.memory_id for receipt in receipts)  # every id range must be checked
    if tampered == "memory":
        _tamper("UPDATE memory_core_memory SET confidence = 0.01 WHERE id = %s", [memory_id])
    elif tampered == "history":
        _tamper("UPDATE memory_core_historicalmemory SET created_at = now() WHERE id = %s", [memory_id])
    elif tampered == "link":
        _tamper("DELETE FROM memory_core_memoryevidence WHERE memory_id = %s", [memory_id])
    elif tampered is not None:
        _tamper("UPDATE executor_receipt SET reason = 'forged' WHERE id = %s", [receipts[tampered].id])
    sequential = verification.verify_tenant(agent.tenant.id, processes=1)
    monkeypatch.setattr(verification, "PARALLEL_FROM_RECEIPTS", 1)
    parallel = verification.verify_tenant(agent.tenant.id, processes=3)
    assert parallel == sequential
    assert parallel.ok is (tampered is None)
    if tampered == "memory":
        assert f"memory {memory_id} content differs" in parallel.problems[0]
    elif tampered in ("history", "link"):
        assert f"memory {memory_id} revision 1 differs" in parallel.problems[0]
    elif tampered is not None:
        assert str(receipts[tampered].id) in parallel.problems[0]


def test_a_forged_chain_head_is_detected(chain):
    from executor.models import ReceiptChain

    ReceiptChain.objects.filter(tenant_id=chain[-1].tenant_id).update(head_hash="d" * 64)
    with pytest.raises(CommandError, match="chain head's hash"):
        call_command("verify_receipts")


def test_a_fresh_demo_verifies_on_this_database(db, capsys):
    """On SQLite, ids read back as 32 hex digits once made every receipt look forged."""
    from proposals.models import OutboxEntry
    from tests.factories import apply_entry

    call_command("seed_demo")
    for entry_id in OutboxEntry.objects.values_list("id", flat=True):
        apply_entry(entry_id, {"host": "test", "pid": 0, "task_id": str(entry_id)})
    call_command("verify_receipts")
    assert "ok quant-research: 3 receipts verified, memories match" in capsys.readouterr().out


def test_a_receipt_hashes_the_same_from_its_row_as_from_its_instance(chain):
    """The verifier hashes rows straight from the database; they must give the instance's body."""
    from executor.chain import receipt_rows

    rows = list(receipt_rows(chain[0].tenant_id, 1, 3))
    assert [Receipt.body_of(row) for row in rows] == [receipt.body() for receipt in chain]
    assert [row["hash"] for row in rows] == [receipt.compute_hash() for receipt in chain]
