"""Signed checkpoints catch what a hash chain alone cannot: a rewrite by someone with database access."""

import base64
import json
import uuid

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from executor.models import Receipt, ReceiptChain
from proposals.models import OutboxEntry


@pytest.fixture
def signing_key(settings):
    key = Ed25519PrivateKey.generate()
    raw = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    settings.CUSTODIAN_CHECKPOINT_KEY = base64.b64encode(raw).decode()
    return key


@pytest.fixture
def checkpoint(agent, applied_memory_factory, signing_key, tmp_path):
    for _ in range(4):
        applied_memory_factory(agent)
    path = tmp_path / "checkpoints.jsonl"
    call_command("checkpoint_receipts", output=str(path))
    return path


def _sql(statement: str, params=()) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(statement, params)


def _pk(value):
    return value.hex if connection.vendor == "sqlite" else value


def _rehash_from(seq: int, tenant_id) -> None:
    """What a DBA would do to hide an edit: recompute every hash from ``seq`` on, and the head."""
    previous = Receipt.objects.filter(tenant_id=tenant_id, seq=seq - 1).first()
    prev_hash = previous.hash if previous else Receipt.GENESIS_HASH
    for receipt in Receipt.objects.filter(tenant_id=tenant_id, seq__gte=seq).order_by("seq"):
        receipt.prev_hash = prev_hash
        receipt.hash = receipt.compute_hash()
        _sql(
            "UPDATE executor_receipt SET prev_hash = %s, hash = %s WHERE id = %s",
            [receipt.prev_hash, receipt.hash, _pk(receipt.id)],
        )
        prev_hash = receipt.hash
    last = Receipt.objects.filter(tenant_id=tenant_id).order_by("-seq").first()
    _sql(
        "UPDATE executor_receiptchain SET seq = %s, head_hash = %s WHERE tenant_id = %s",
        [last.seq, last.hash, _pk(tenant_id)],
    )


def test_an_untouched_chain_extends_its_checkpoint(checkpoint, agent, applied_memory_factory, capsys):
    applied_memory_factory(agent)  # growth after the checkpoint is fine
    call_command("verify_receipts", checkpoint=str(checkpoint))
    assert "extends the checkpoint at seq 4" in capsys.readouterr().out


def test_a_whole_chain_rewrite_passes_the_chain_but_not_the_checkpoint(checkpoint, agent):
    victim = Receipt.objects.get(seq=2)
    _sql("UPDATE executor_receipt SET reason = 'nothing happened here' WHERE id = %s", [_pk(victim.id)])
    _rehash_from(2, agent.tenant.id)
    call_command("verify_receipts")  # the rewritten chain is consistent in itself …
    with pytest.raises(CommandError, match="chain was rewritten"):
        call_command("verify_receipts", checkpoint=str(checkpoint))


def test_a_deleted_row_is_caught_even_when_the_rest_is_renumbered(checkpoint, agent, capsys):
    _sql("DELETE FROM executor_receipt WHERE seq = 2")
    for receipt in Receipt.objects.filter(seq__gt=2).order_by("seq"):
        _sql("UPDATE executor_receipt SET seq = %s WHERE id = %s", [receipt.seq - 1, _pk(receipt.id)])
    _rehash_from(2, agent.tenant.id)
    with pytest.raises(CommandError):
        call_command("verify_receipts", checkpoint=str(checkpoint))
    assert "receipt seq 4 of the checkpoint is missing" in capsys.readouterr().err


def test_an_inserted_row_is_caught(checkpoint, agent):
    for receipt in Receipt.objects.filter(seq__gte=2).order_by("-seq"):
        _sql("UPDATE executor_receipt SET seq = %s WHERE id = %s", [receipt.seq + 1, _pk(receipt.id)])
    forged = Receipt.objects.get(seq=1)
    columns = [
        f.column
        for f in Receipt._meta.concrete_fields
        if f.column not in ("id", "seq", "outbox_entry_id", "hash")
    ]
    entry = OutboxEntry.objects.create(
        tenant_id=forged.tenant_id,
        proposal_id=forged.proposal_id,
        action_digest=forged.action_digest,
        available_at=forged.created_at,
    )
    cols = ", ".join(columns)
    _sql(
        f"INSERT INTO executor_receipt (id, seq, outbox_entry_id, hash, {cols}) "
        f"SELECT %s, 2, %s, %s, {cols} FROM executor_receipt WHERE id = %s",
        [_pk(uuid.uuid4()), _pk(entry.id), "f" * 64, _pk(forged.id)],
    )
    _rehash_from(2, agent.tenant.id)
    call_command("verify_receipts")  # the chain alone is consistent again …
    with pytest.raises(CommandError, match="no longer has the signed hash"):  # … the checkpoint is not fooled
        call_command("verify_receipts", checkpoint=str(checkpoint))


def test_an_edited_checkpoint_file_is_refused(checkpoint):
    signed = json.loads(checkpoint.read_text().splitlines()[0])
    signed["seq"] = 1
    checkpoint.write_text(json.dumps(signed) + "\n")
    with pytest.raises(CommandError, match="signature is invalid"):
        call_command("verify_receipts", checkpoint=str(checkpoint))


def test_checkpointing_needs_a_key(db, settings, tmp_path):
    settings.CUSTODIAN_CHECKPOINT_KEY = ""
    with pytest.raises(CommandError, match="CUSTODIAN_CHECKPOINT_KEY"):
        call_command("checkpoint_receipts", output=str(tmp_path / "x.jsonl"))
    assert ReceiptChain.objects.count() == 0


@pytest.mark.parametrize(
    ("private", "public", "named"),
    [
        ("", "", "CUSTODIAN_CHECKPOINT_KEY"),
        ("not base64 at all!", "", "CUSTODIAN_CHECKPOINT_KEY"),
        (base64.b64encode(b"too short").decode(), "", "CUSTODIAN_CHECKPOINT_KEY"),
        ("", "bm9wZQ==", "CUSTODIAN_CHECKPOINT_PUBLIC_KEY"),
    ],
)
def test_verifying_a_checkpoint_without_a_usable_key_is_a_clear_error(
    checkpoint, settings, private, public, named
):
    settings.CUSTODIAN_CHECKPOINT_KEY, settings.CUSTODIAN_CHECKPOINT_PUBLIC_KEY = private, public
    with pytest.raises(CommandError, match=named):
        call_command("verify_receipts", checkpoint=str(checkpoint))


def test_signing_with_a_malformed_key_is_a_clear_error(db, settings, tmp_path):
    settings.CUSTODIAN_CHECKPOINT_KEY = "bm9wZQ=="
    with pytest.raises(CommandError, match="CUSTODIAN_CHECKPOINT_KEY"):
        call_command("checkpoint_receipts", output=str(tmp_path / "x.jsonl"))


@pytest.mark.parametrize("content", [None, "not json\n", '{"tenant": "x"}\n'])
def test_an_unreadable_checkpoint_file_is_a_clear_error(db, signing_key, tmp_path, content):
    path = tmp_path / "checkpoints.jsonl"
    if content is not None:
        path.write_text(content)
    with pytest.raises(CommandError, match="checkpoint"):
        call_command("verify_receipts", checkpoint=str(path))


def test_the_command_exits_non_zero_without_a_traceback_when_the_key_is_missing(tmp_path):
    """What an operator sees: one line naming the setting, exit status 1."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "checkpoints.jsonl"
    path.write_text(
        '{"tenant_id": "x", "tenant": "x", "seq": 0, "head_hash": "0", "signed_at": "", "signature": ""}\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIAN_CHECKPOINT")}
    result = subprocess.run(
        [sys.executable, "manage.py", "verify_receipts", "--checkpoint", str(path)],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "CUSTODIAN_CHECKPOINT_KEY" in result.stderr
    assert "Traceback" not in result.stderr
