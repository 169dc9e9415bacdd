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


# "Verify now" as a button on each row, with live progress (htmx polls the cell while it runs).


def _cell(client, chain):
    return client.get(reverse("admin:executor_receiptchain_verification", args=[chain.tenant_id]))


def _press(client, chain, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return client.post(reverse("admin:executor_receiptchain_verify", args=[chain.tenant_id]))


def test_the_button_queues_a_verification_and_the_cell_starts_polling(
    auditor_client, chain, django_capture_on_commit_callbacks
):
    response = _press(auditor_client, chain, django_capture_on_commit_callbacks)
    assert response.status_code == 200
    html = response.content.decode()
    assert "queued since" in html and 'hx-trigger="every 1s"' in html
    assert ChainVerification.objects.get(tenant=chain.tenant).status == ChainVerification.Status.QUEUED


def test_the_panel_loads_htmx_and_shows_the_button_and_the_command(auditor_client, chain):
    page = _panel(auditor_client)
    assert "htmx" in page and "Verify now</button>" in page and "manage.py verify_receipts" in page


def test_an_auditor_of_another_tenant_cannot_verify_or_watch_this_chain(
    client, chain, other_agent, django_capture_on_commit_callbacks
):
    from tests.admin.test_memory_timeline import _staff_client

    _staff_client(client, "b-auditor", other_agent.tenant)
    assert _press(client, chain, django_capture_on_commit_callbacks).status_code == 404
    assert _cell(client, chain).status_code == 404
    assert not ChainVerification.objects.exists()


def test_staff_without_view_permission_cannot_verify(
    client, chain, agent, django_capture_on_commit_callbacks
):
    from tests.admin.test_memory_timeline import _staff_client

    _staff_client(client, "no-perm", agent.tenant, group="")
    assert _press(client, chain, django_capture_on_commit_callbacks).status_code in (403, 404)
    assert not ChainVerification.objects.exists()


def test_a_person_who_is_not_staff_cannot_verify(client, chain, agent, django_capture_on_commit_callbacks):
    from tests.factories import make_person

    client.force_login(make_person("outsider", agent.tenant, "tenancy.audit_tenant"))
    assert _press(client, chain, django_capture_on_commit_callbacks).status_code == 302
    assert not ChainVerification.objects.exists()


def test_verifying_is_a_post(auditor_client, chain):
    response = auditor_client.get(reverse("admin:executor_receiptchain_verify", args=[chain.tenant_id]))
    assert response.status_code == 405
    assert not ChainVerification.objects.exists()


def test_a_chain_range_reports_progress_as_it_goes(chain):
    from executor.chain import verify_chain_range

    heard: list[int] = []
    verified, broken = verify_chain_range(chain.tenant_id, 1, 3, on_progress=heard.append, every=2)
    assert (verified, broken, heard) == (3, None, [2, 1])


def test_the_task_records_progress_on_its_row(auditor_client, chain, django_capture_on_commit_callbacks):
    _press(auditor_client, chain, django_capture_on_commit_callbacks)
    verification = ChainVerification.objects.get(tenant=chain.tenant)
    done = run_chain_verification(verification_id=verification.pk)
    assert (done.status, done.receipts, done.total) == (ChainVerification.Status.OK, 3, 3)


def test_while_running_the_cell_shows_checked_of_total_and_keeps_polling(
    auditor_client, chain, django_capture_on_commit_callbacks
):
    from executor.verification import record_progress

    _press(auditor_client, chain, django_capture_on_commit_callbacks)
    verification = ChainVerification.objects.get(tenant=chain.tenant)
    # What the task has written after its first range: running, 2 of 3 recomputed.
    ChainVerification.objects.filter(pk=verification.pk).update(status="running", total=3)
    record_progress(verification.pk, 2)
    html = _cell(auditor_client, chain).content.decode()
    assert "running: 2 of 3 receipts checked (66%)" in html and "hx-trigger" in html


def test_once_finished_the_cell_shows_the_result_and_stops_polling(
    auditor_client, chain, django_capture_on_commit_callbacks
):
    _press(auditor_client, chain, django_capture_on_commit_callbacks)
    run_chain_verification(verification_id=ChainVerification.objects.get(tenant=chain.tenant).pk)
    html = _cell(auditor_client, chain).content.decode()
    assert "verified ✓ up to #3 at" in html and "(3 receipts)" in html
    assert "hx-trigger" not in html


@pytest.mark.parametrize("tenants", [1, 4])
def test_the_panel_costs_the_same_queries_for_any_number_of_chains(
    admin_client, applied_memory_factory, tenants, django_assert_max_num_queries
):
    from tests.factories import make_agent

    for n in range(tenants):
        applied_memory_factory(make_agent(f"desk-{n}", f"agent-{n}"))
    with django_assert_max_num_queries(10):
        _panel(admin_client)
