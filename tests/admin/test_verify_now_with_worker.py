""" "Verify now" from the chain panel, run by a real Celery worker, watched until it completes."""

import pytest
from django.db import connection
from django.urls import reverse

from executor.models import ChainVerification
from tests.api.test_big_numbers import unhashable_evidence
from tests.workers import celery_worker, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def _press_and_watch(client, tenant_id, tmp_path) -> str:
    """Press the button, then poll the cell as htmx does until the worker has recorded a result."""
    cell = reverse("admin:executor_receiptchain_verification", args=[tenant_id])
    with celery_worker(tmp_path, concurrency=1):
        pressed = client.post(reverse("admin:executor_receiptchain_verify", args=[tenant_id]))
        assert pressed.status_code == 200 and "hx-trigger" in pressed.content.decode()
        wait_until(lambda: "hx-trigger" not in client.get(cell).content.decode(), what="verification result")
    return client.get(cell).content.decode()


def _check(auditor_client, agent, applied_memory_factory, tmp_path):
    for _ in range(3):
        applied_memory_factory(agent)
    html = _press_and_watch(auditor_client, agent.tenant.pk, tmp_path)
    assert "verified ✓ up to #3 at" in html and "(3 receipts)" in html
    verification = ChainVerification.objects.get(tenant=agent.tenant)
    assert (verification.receipts, verification.total, verification.requested_by) == (3, 3, "desk-auditor")


@pytest.mark.services
def test_verify_now_completes_with_a_worker_on_postgresql_and_redis(
    auditor_client, agent, applied_memory_factory, tmp_path
):
    _check(auditor_client, agent, applied_memory_factory, tmp_path)


def test_verify_now_completes_with_a_worker_on_the_embedded_default(
    auditor_client, agent, applied_memory_factory, tmp_path
):
    if connection.vendor != "sqlite":
        pytest.skip("the embedded default is SQLite and the filesystem broker")
    _check(auditor_client, agent, applied_memory_factory, tmp_path)


def _check_unhashable(auditor_client, agent, applied_memory_factory, tmp_path):
    applied_memory_factory(agent)
    revision = unhashable_evidence(agent)
    html = _press_and_watch(auditor_client, agent.tenant.pk, tmp_path)
    assert "BROKEN ✗" in html and f"evidence {revision.source_id}@1 content cannot be hashed" in html
    verification = ChainVerification.objects.get(tenant=agent.tenant)
    assert verification.status == ChainVerification.Status.BROKEN and verification.finished_at is not None


@pytest.mark.services
def test_verify_now_records_a_failure_it_cannot_hash_on_postgresql_and_redis(
    auditor_client, agent, applied_memory_factory, tmp_path
):
    _check_unhashable(auditor_client, agent, applied_memory_factory, tmp_path)


def test_verify_now_records_a_failure_it_cannot_hash_on_the_embedded_default(
    auditor_client, agent, applied_memory_factory, tmp_path
):
    if connection.vendor != "sqlite":
        pytest.skip("the embedded default is SQLite and the filesystem broker")
    _check_unhashable(auditor_client, agent, applied_memory_factory, tmp_path)
