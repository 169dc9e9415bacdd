"""A failed chain verification is announced, with counts and ids, never what the problem says."""

import pytest
from django.core.management import CommandError, call_command

from executor.models import ChainVerification, ReceiptChain
from executor.services import request_chain_verification, run_chain_verification
from notifications.models import WebhookDelivery
from tests.notifications.conftest import endpoint

pytestmark = pytest.mark.django_db


def test_a_broken_chain_is_announced_from_verify_now_and_from_the_command(agent, applied_memory):
    hook = endpoint(agent.tenant, "https://hooks.example/", "chain.verification_failed", "receipt.written")
    ReceiptChain.objects.filter(tenant_id=agent.tenant.pk).update(head_hash="d" * 64)
    verification = request_chain_verification(tenant_id=agent.tenant.pk, requested_by="auditor")
    assert run_chain_verification(verification_id=verification.pk).status == ChainVerification.Status.BROKEN
    with pytest.raises(CommandError):
        call_command("verify_receipts")
    failures = WebhookDelivery.objects.filter(endpoint=hook, event_type="chain.verification_failed")
    assert [d.payload["data"]["verification_id"] for d in failures.order_by("created_at")] == [
        str(verification.pk),
        None,
    ]
    assert all(d.payload["data"]["problems"] == 1 for d in failures)
    assert "hash" not in str([d.payload for d in failures])
