"""End to end with real Celery workers on Redis and PostgreSQL."""

import pytest
import redis
from django.conf import settings
from django.core.management import call_command

from executor.models import ChainVerification, Receipt
from executor.services import request_chain_verification
from executor.tasks import apply_entry_task
from memory_core.models import Memory
from proposals.models import OutboxEntry
from tests.factories import create_payload, make_evidence, user_preference
from tests.workers import celery_worker, wait_until

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def broker():
    """An empty broker database, emptied again afterwards."""
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.flushdb()
    yield client
    client.flushdb()


def _submit(api, agent, key):
    payload = create_payload(user_preference(), [make_evidence(agent.agent)])
    response = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == 201, response.content
    return response.json()


def test_auto_proposal_is_applied_by_a_worker_and_the_chain_verifies(agent, api, broker, tmp_path, capsys):
    with celery_worker(tmp_path):
        body = _submit(api, agent, "e2e-1")  # the on-commit nudge goes to Redis
        wait_until(lambda: Receipt.objects.filter(proposal_id=body["id"]).exists(), what="receipt")
    receipt = Receipt.objects.get(proposal_id=body["id"])
    memory = Memory.objects.get(pk=body["memory_id"])
    assert receipt.outcome == "applied"
    assert memory.revision == 1
    assert receipt.executor["task_id"]  # the nudge's (the entry's id only when nudges are per entry)
    assert receipt.executor["pid"] > 0
    assert api.get(f"/api/v1/proposals/{body['id']}/").json()["status"] == "applied"
    call_command("verify_receipts")
    assert "1 receipts verified" in capsys.readouterr().out


def test_duplicate_deliveries_of_one_entry_have_one_effect(agent, api, broker, tmp_path):
    body = _submit(api, agent, "e2e-dup")
    entry = OutboxEntry.objects.get(proposal_id=body["id"])
    for _ in range(4):  # four per-entry copies, as the embedded mode or a pre-coalescing web sends
        apply_entry_task.apply_async(args=[str(entry.id)], task_id=str(entry.id))
    for _ in range(2):  # and two coalesced ones ("apply what is due")
        apply_entry_task.apply_async()
    with celery_worker(tmp_path, concurrency=4):
        wait_until(lambda: broker.llen("executor") == 0, what="queue drained")
        wait_until(lambda: Receipt.objects.filter(outbox_entry=entry).exists(), what="receipt")
    assert Receipt.objects.filter(proposal_id=body["id"]).count() == 1
    assert Memory.history.filter(id=body["memory_id"]).count() == 1


def test_lost_broker_messages_are_recovered_by_the_sweep(agent, api, broker, tmp_path):
    bodies = [_submit(api, agent, f"e2e-lost-{n}") for n in range(5)]
    broker.flushdb()  # every nudge is lost, as if Redis restarted empty
    with celery_worker(tmp_path, beat=True):
        wait_until(lambda: Receipt.objects.count() == 5, what="all five receipts")
    assert set(Memory.objects.values_list("revision", flat=True)) == {1}
    assert {str(p) for p in Receipt.objects.values_list("proposal_id", flat=True)} == {
        b["id"] for b in bodies
    }


def test_verify_now_is_run_by_a_worker_and_recorded(agent, applied_memory, broker, tmp_path):
    with celery_worker(tmp_path):
        verification = request_chain_verification(tenant_id=agent.tenant.id, requested_by="auditor")
        wait_until(
            lambda: ChainVerification.objects.filter(pk=verification.pk, finished_at__isnull=False).exists(),
            what="verification recorded",
        )
    verification.refresh_from_db()
    assert (verification.status, verification.head_seq, verification.receipts) == ("ok", 1, 1)
