"""The chain panel: head, last verification, last signed checkpoint, "verify now" in the background."""

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
from django.core.management import call_command
from django.db import connection, transaction
from django.urls import reverse

from executor.models import ChainVerification, Receipt, ReceiptChain
from executor.services import run_chain_verification

PANEL = "admin:executor_receiptchain_changelist"


def _panel(client) -> str:
    response = client.get(reverse(PANEL))
    assert response.status_code == 200
    return response.content.decode()


def _verify_now(client, chain, django_capture_on_commit_callbacks):
    """Press "verify now"; the on-commit nudge goes to the broker, where no worker takes it here."""
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse(PANEL), {"action": "verify", "_selected_action": [str(chain.pk)]}, follow=True
        )
    assert response.status_code == 200
    return ChainVerification.objects.get(tenant_id=chain.tenant_id)


@pytest.fixture
def chain(agent, applied_memory_factory):
    for _ in range(3):
        applied_memory_factory(agent)
    return ReceiptChain.objects.get(tenant=agent.tenant)


def test_verify_now_queues_a_verification_and_runs_nothing_in_the_request(
    auditor_client, chain, django_capture_on_commit_callbacks
):
    verification = _verify_now(auditor_client, chain, django_capture_on_commit_callbacks)
    assert verification.status == ChainVerification.Status.QUEUED
    assert verification.requested_by == "desk-auditor"
    assert "queued since" in _panel(auditor_client)


def test_the_panel_shows_the_recorded_result(auditor_client, chain, django_capture_on_commit_callbacks):
    verification = _verify_now(auditor_client, chain, django_capture_on_commit_callbacks)
    run_chain_verification(verification_id=verification.pk)  # what the Celery task runs
    page = _panel(auditor_client)
    assert "verified ✓ up to #3 at" in page
    assert "manage.py verify_receipts --tenant quant-desk" in page


def test_a_broken_chain_shows_broken_and_why(auditor_client, chain, django_capture_on_commit_callbacks):
    victim = Receipt.objects.get(tenant=chain.tenant, seq=2)
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = replica")
        pk = victim.id.hex if connection.vendor == "sqlite" else victim.id
        cursor.execute("UPDATE executor_receipt SET reason = 'forged' WHERE id = %s", [pk])
    verification = _verify_now(auditor_client, chain, django_capture_on_commit_callbacks)
    run_chain_verification(verification_id=verification.pk)
    page = _panel(auditor_client)
    assert "BROKEN ✗" in page and str(victim.id) in page


def test_a_verification_runs_once(auditor_client, chain, django_capture_on_commit_callbacks):
    verification = _verify_now(auditor_client, chain, django_capture_on_commit_callbacks)
    first = run_chain_verification(verification_id=verification.pk)
    again = run_chain_verification(verification_id=verification.pk)
    assert (again.status, again.finished_at) == (first.status, first.finished_at)


def test_the_last_signed_checkpoint_is_shown(auditor_client, chain, settings, tmp_path):
    raw = Ed25519PrivateKey.generate().private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    settings.CUSTODIAN_CHECKPOINT_KEY = base64.b64encode(raw).decode()
    assert "none recorded" in _panel(auditor_client)
    call_command("checkpoint_receipts", output=str(tmp_path / "heads.jsonl"))
    assert "#3 signed " in _panel(auditor_client)


def test_another_tenants_chain_is_not_on_the_panel(auditor_client, chain, other_agent, remember):
    remember("foreign", handle=other_agent)
    page = _panel(auditor_client)
    assert "quant-desk" in page and other_agent.tenant.name not in page


def test_the_receipt_page_says_when_its_chain_was_verified(
    auditor_client, chain, django_capture_on_commit_callbacks
):
    verification = _verify_now(auditor_client, chain, django_capture_on_commit_callbacks)
    run_chain_verification(verification_id=verification.pk)
    receipt = Receipt.objects.get(tenant=chain.tenant, seq=2)
    page = auditor_client.get(reverse("admin:executor_receipt_change", args=[receipt.pk])).content.decode()
    assert "Chain verified ✓ at" in page
