"""verify_receipts also proves that every memory revision came through a receipt."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from executor.models import ReceiptChain
from memory_core import mutations
from memory_core.models import Memory


def test_memories_written_through_the_executor_verify(applied_memory, capsys):
    call_command("verify_receipts")
    assert "1 receipts verified, memories match" in capsys.readouterr().out


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
    with pytest.raises(CommandError, match=f"memory {rogue.id} revision 1 has no applied receipt"):
        call_command("verify_receipts")


def test_a_memory_changed_in_sql_is_named(applied_memory):
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_core_memory SET confidence = 0.01 WHERE id = %s",
            [applied_memory.id.hex if connection.vendor == "sqlite" else applied_memory.id],
        )
    with pytest.raises(CommandError, match=f"memory {applied_memory.id} content differs"):
        call_command("verify_receipts")


def test_auditor_can_verify_chains_from_the_admin(admin_client, applied_memory):
    chain = ReceiptChain.objects.get()
    response = admin_client.post(
        "/admin/executor/receiptchain/",
        {"action": "verify", "_selected_action": [chain.pk]},
        follow=True,
    )
    assert "1 receipts verified" in response.content.decode()
    assert Memory.objects.count() == 1
