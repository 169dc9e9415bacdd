"""Webhooks delivered by a real Celery worker to a real local HTTP receiver (SQLite and PostgreSQL)."""

import json
import os
import signal
from pathlib import Path

import pytest
from standardwebhooks import Webhook

from notifications.models import DeliveryAttempt, WebhookDelivery
from tests.factories import create_payload, factor_fact, make_agent, make_evidence, submit
from tests.notifications.conftest import endpoint
from tests.notifications.receiver import http_receiver
from tests.workers import celery_worker, wait_until

pytestmark = pytest.mark.django_db(transaction=True)
QUEUES = ("executor", "notifications")


def _pending_review(handle, **memory):
    proposal = submit(handle.agent, create_payload(factor_fact(**memory), [make_evidence(handle.agent)]))
    assert proposal.status == "pending_review"
    return proposal


def _delivery(proposal) -> WebhookDelivery:
    return WebhookDelivery.objects.get(payload__data__proposal_id=str(proposal.pk))


def test_a_receiver_failing_twice_gets_one_webhook_id_three_times_and_acts_once(
    agent, quick_retries, tmp_path
):
    with http_receiver("500", "500", "200") as receiver:
        hook = endpoint(agent.tenant, receiver.url, "proposal.pending_review")
        with celery_worker(tmp_path, beat=True, queues=QUEUES):
            proposal = _pending_review(agent)
            wait_until(lambda: len(receiver.requests) >= 3, what="three attempts")
            wait_until(lambda: _delivery(proposal).status == "delivered", what="delivered")
    delivery = _delivery(proposal)
    assert receiver.ids() == [str(delivery.id)] * 3
    assert receiver.effects == [str(delivery.id)]
    assert delivery.attempts == 3
    codes = list(DeliveryAttempt.objects.filter(delivery=delivery).values_list("status_code", flat=True))
    assert codes == [500, 500, 200]
    for request in receiver.requests:  # every attempt signed, verifiable with the receiver's library
        event = Webhook(hook.secret).verify(request.body, request.headers)
        assert event["type"] == "proposal.pending_review"
        assert event["data"]["proposal_id"] == str(proposal.pk)
        assert event["data"]["rule"] == proposal.matched_rule
    with pytest.raises(Exception):  # noqa: B017 (the library raises its own WebhookVerificationError)
        Webhook(hook.secret).verify(receiver.requests[0].body + b" ", receiver.requests[0].headers)


def test_a_timeout_is_retried(agent, quick_retries, tmp_path):
    with http_receiver("sleep:5") as receiver:
        endpoint(agent.tenant, receiver.url, "proposal.pending_review")
        with celery_worker(tmp_path, beat=True, queues=QUEUES):
            proposal = _pending_review(agent)
            wait_until(lambda: _delivery(proposal).status == "delivered", what="delivered")
    errors = list(
        DeliveryAttempt.objects.filter(delivery=_delivery(proposal)).values_list("error_class", flat=True)
    )
    assert errors == ["ReadTimeout", ""]
    assert len(set(receiver.ids())) == 1


def test_a_delivery_is_dead_after_the_attempt_bound(agent, quick_retries, tmp_path):
    quick_retries.setenv("CUSTODIAN_WEBHOOK_MAX_ATTEMPTS", "3")
    with http_receiver(*["503"] * 10) as receiver:
        endpoint(agent.tenant, receiver.url, "proposal.pending_review")
        with celery_worker(tmp_path, beat=True, queues=QUEUES):
            proposal = _pending_review(agent)
            wait_until(lambda: _delivery(proposal).status == "dead", what="dead letter")
            wait_until(lambda: len(receiver.requests) >= 3, what="three requests")
    delivery = _delivery(proposal)
    assert (delivery.attempts, delivery.last_status_code, delivery.last_error) == (3, 503, "HTTP 503")
    assert DeliveryAttempt.objects.filter(delivery=delivery).count() == 3
    assert len(receiver.requests) == 3 and receiver.effects == []


def _kill_tree(pid: int) -> None:
    """SIGKILL a worker and its pool children at once, as a crashed machine would stop them."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    for child in [*children, str(pid)]:
        os.kill(int(child), signal.SIGKILL)


def test_nothing_is_lost_when_the_worker_is_killed_mid_delivery(agent, quick_retries, tmp_path):
    quick_retries.setenv("CUSTODIAN_WEBHOOK_TIMEOUT_SECONDS", "20")
    quick_retries.setenv("CUSTODIAN_WEBHOOK_LEASE_SECONDS", "25")
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    with http_receiver("hang") as receiver:
        endpoint(agent.tenant, receiver.url, "proposal.pending_review")
        with celery_worker(tmp_path / "first", beat=True, queues=QUEUES, concurrency=1) as first:
            proposal = _pending_review(agent)
            wait_until(lambda: len(receiver.requests) == 1, what="the first POST in flight")
            _kill_tree(first.pid)
            first.wait(30)
        assert _delivery(proposal).status == "delivering"
        with celery_worker(tmp_path / "second", beat=True, queues=QUEUES):
            wait_until(lambda: _delivery(proposal).status == "delivered", timeout=120, what="delivered")
    delivery = _delivery(proposal)
    assert receiver.ids() == [str(delivery.id)] * 2
    assert receiver.effects == [str(delivery.id)]
    assert delivery.attempts == 2


def test_an_endpoint_gets_only_its_own_tenants_events(agent, quick_retries, tmp_path):
    other = make_agent("other-desk", "other-agent")
    with http_receiver() as mine, http_receiver() as theirs:
        endpoint(agent.tenant, mine.url, "proposal.pending_review", "receipt.written")
        endpoint(other.tenant, theirs.url, "proposal.pending_review", "receipt.written")
        with celery_worker(tmp_path, beat=True, queues=QUEUES):
            own = [_pending_review(agent, dedupe_key=f"factor:a{n}") for n in range(2)]
            foreign = _pending_review(other)
            wait_until(lambda: len(mine.effects) == 2 and len(theirs.effects) == 1, what="deliveries")
    mine_ids = {json.loads(r.body)["data"]["proposal_id"] for r in mine.requests}
    theirs_ids = {json.loads(r.body)["data"]["proposal_id"] for r in theirs.requests}
    assert mine_ids == {str(p.pk) for p in own}
    assert theirs_ids == {str(foreign.pk)}
    assert {json.loads(r.body)["tenant_id"] for r in mine.requests} == {str(agent.tenant.pk)}
