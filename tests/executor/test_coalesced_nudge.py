"""Coalesced nudges: with a shared cache, a burst of due entries costs a few broker messages, not one each.

No worker here runs beat, so every entry that gets applied was applied by a nudge, never by the sweep.
"""

import contextlib
import logging

import pytest
from celery import Celery, current_app
from django.conf import settings
from django.core.cache import cache

from executor.models import Receipt
from executor.tasks import apply_entry_task
from proposals.models import OutboxEntry
from proposals.services.outbox import NUDGE_KEY
from tests.factories import create_payload, make_evidence, submit, user_preference
from tests.workers import broker_messages, celery_worker, empty_broker, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def broker():
    empty_broker()
    yield
    empty_broker()


def _submit(agent, n: int):
    """Submit one auto-apply proposal outside a request: its nudge runs at commit."""
    content = {
        "statement": f"Alice prefers variant {n}",
        "preference_key": f"key_{n}",
        "preference_value": "v",
    }
    return submit(agent.agent, create_payload(user_preference(content=content), [make_evidence(agent.agent)]))


def _receipts(proposals) -> list[Receipt]:
    return list(Receipt.objects.filter(proposal__in=proposals))


def test_coalescing_is_on_exactly_when_every_process_shares_the_cache():
    shared = settings.CACHES["default"]["BACKEND"] == "core.cache.RedisCache"
    assert settings.CUSTODIAN_NUDGE_COALESCE is shared


@pytest.mark.services
def test_an_entry_committed_while_a_nudge_is_pending_is_applied_by_that_nudges_worker(
    agent, broker, tmp_path
):
    first = _submit(agent, 1)
    second = _submit(agent, 2)  # the first nudge is still queued: nothing more to publish
    messages = broker_messages()
    assert len(messages) == 1, messages
    assert messages[0]["headers"]["task"] == "executor.apply_entry"
    assert messages[0]["headers"]["argsrepr"] == "()"  # no entry: whatever is due
    with celery_worker(tmp_path):
        wait_until(lambda: len(_receipts([first, second])) == 2, what="both receipts")
    assert {r.executor["task_id"] for r in _receipts([first, second])} == {messages[0]["headers"]["id"]}
    assert cache.get(NUDGE_KEY) is None


@pytest.mark.services
def test_an_entry_committed_after_the_worker_cleared_the_nudge_publishes_its_own(agent, broker):
    first = _submit(agent, 1)
    apply_entry_task.apply()  # a worker takes the nudge: clears the key, then leases what is due
    assert len(_receipts([first])) == 1
    second = _submit(agent, 2)
    assert len(broker_messages()) == 2
    apply_entry_task.apply()
    assert len(_receipts([second])) == 1


@pytest.mark.services
def test_a_burst_costs_few_messages_and_full_leases_fan_out_to_idle_workers(
    agent, broker, tmp_path, monkeypatch
):
    entries, batch = 30, 5
    proposals = [_submit(agent, n) for n in range(entries)]
    published = len(broker_messages())
    assert 1 <= published <= entries // 10, published
    monkeypatch.setenv("CUSTODIAN_EXECUTOR_BATCH", str(batch))  # the worker's lease size
    with celery_worker(tmp_path, concurrency=2):
        wait_until(lambda: len(_receipts(proposals)) == entries, what=f"all {entries} receipts")
    receipts = _receipts(proposals)
    per_task: dict[str, int] = {}
    for receipt in receipts:
        per_task[receipt.executor["task_id"]] = per_task.get(receipt.executor["task_id"], 0) + 1
    # Each nudge took one lease of at most ``batch`` entries and, when it was full, passed a nudge on.
    assert max(per_task.values()) <= batch and len(per_task) >= entries // batch, per_task
    assert len({receipt.executor["pid"] for receipt in receipts}) == 2  # both pool processes drained it
    assert not OutboxEntry.objects.exclude(status="done").exists()


@contextlib.contextmanager
def unreachable_broker():
    """Make this process's Celery app publish to a port where no broker listens, then restore it."""
    app = current_app._get_current_object()
    Celery("unreachable", broker="redis://127.0.0.1:9/0", set_as_current=True)
    try:
        yield
    finally:
        app.set_current()


@pytest.mark.services
def test_a_failed_publish_clears_the_nudge_so_the_next_submit_publishes(agent, broker, caplog):
    with unreachable_broker(), caplog.at_level(logging.WARNING, logger="proposals.services.outbox"):
        _submit(agent, 1)
    assert "the sweep will dispatch it" in caplog.text
    assert cache.get(NUDGE_KEY) is None  # else submits would wait on a nudge that was never sent
    assert broker_messages() == []
    _submit(agent, 2)
    assert len(broker_messages()) == 1


def test_without_a_shared_cache_every_due_entry_is_nudged_alone(agent, broker, tmp_path, settings):
    settings.CUSTODIAN_NUDGE_COALESCE = False  # the embedded default (each process has its own cache)
    proposals = [_submit(agent, n) for n in range(3)]
    entries = {str(OutboxEntry.objects.get(proposal=p).pk) for p in proposals}
    messages = broker_messages()
    assert {m["headers"]["id"] for m in messages} == entries  # one each, the entry's id as task id
    assert {m["headers"]["argsrepr"] for m in messages} == {repr([entry]) for entry in entries}
    with celery_worker(tmp_path, concurrency=1):
        wait_until(lambda: len(_receipts(proposals)) == 3, timeout=90, what="three receipts")
    assert {receipt.executor["task_id"] for receipt in _receipts(proposals)} <= entries
