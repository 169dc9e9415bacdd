"""Four workers race through 1,000 conflicting updates of 10 memories: one winner per base revision."""

import time
from collections import Counter

import pytest
import redis
from django.conf import settings
from django.core.management import call_command

from executor.models import Receipt
from memory_core.models import Memory
from proposals.models import OutboxEntry
from proposals.services import submit_proposal
from proposals.services.outbox import clear_nudge
from tests.factories import as_payload, make_evidence, owner_context
from tests.workers import celery_worker, wait_until

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

MEMORIES, UPDATES_EACH = 10, 100


def _submit(agent, payload, key):
    return submit_proposal(
        agent=agent, idempotency_key=key, payload=as_payload(payload), request_hash=key
    ).proposal


def test_conflicting_updates_apply_exactly_once_per_base_revision(
    agent, applied_memory_factory, tmp_path, capsys
):
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    memories = [applied_memory_factory(agent) for _ in range(MEMORIES)]
    # The fixture's nudges are spent: start from an empty queue, and without the coalescing key
    # they left in the cache, or a burst submitted within its five seconds would publish nothing.
    broker.flushdb()
    clear_nudge()
    evidence = make_evidence(agent.agent).binding()
    started = time.monotonic()
    for memory in memories:
        for n in range(UPDATES_EACH):
            payload = {
                "action": "update",
                "memory_id": str(memory.id),
                "base_revision": 1,
                "changes": {"content": {"statement": f"variant {n} of {memory.id}"}},  # restating none
                "evidence": [evidence],
                "policy_context": owner_context(),
            }
            _submit(agent.agent, payload, f"race-{memory.id}-{n}")
    submitted = time.monotonic() - started
    total = MEMORIES * UPDATES_EACH
    with celery_worker(tmp_path, concurrency=4):
        wait_until(lambda: Receipt.objects.count() == MEMORIES + total, timeout=900, what="all receipts")
    drained = time.monotonic() - started - submitted

    outcomes = Counter(Receipt.objects.filter(proposal__action="update").values_list("memory_id", "outcome"))
    for memory in memories:
        assert outcomes[(memory.id, "applied")] == 1
        assert outcomes[(memory.id, "stale")] == UPDATES_EACH - 1
    assert set(Memory.objects.values_list("revision", flat=True)) == {2}
    assert Memory.history.count() == 2 * MEMORIES  # zero lost or doubled updates
    assert not OutboxEntry.objects.exclude(status="done").exists()
    call_command("verify_receipts")
    with capsys.disabled():
        print(
            f"\n  {total} conflicting updates: submitted {submitted:.1f}s, 4 workers drained {drained:.1f}s"
        )
