"""Health probes over real HTTP: /livez answers while the process runs, /readyz names what is not ready.

Both modes: the embedded default (SQLite, filesystem broker, a worker on the test database
file) and PostgreSQL with Redis (``services``), the worker connected as ``custodian_executor``.
"""

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from django.core.cache import caches
from django.db import connection
from django.utils import timezone

from health.models import WorkerHeartbeat
from notifications.models import WebhookDelivery
from proposals.models import OutboxEntry
from tests.factories import create_payload, factor_fact, make_evidence, submit, user_preference
from tests.faults.harness import free_port
from tests.notifications.conftest import endpoint
from tests.notifications.receiver import http_receiver
from tests.workers import celery_worker, empty_broker, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

CHECK_NAMES = ["database", "broker", "cache", "worker", "outbox", "notifications"]
CLOSED_PORT = "redis://127.0.0.1:1"


@pytest.fixture(autouse=True)
def _unthrottled(settings):
    """Polling /readyz many times a second stays within the caller's rate (the throttle has its own test)."""
    settings.CUSTODIAN_API_RATE = "100000/min"


def readyz(server, *exclude: str) -> httpx.Response:
    return httpx.get(f"{server.url}/readyz", params=[("exclude", name) for name in exclude], timeout=30)


def wait_for_readyz(server, status: int, *exclude: str) -> httpx.Response:
    """Poll /readyz until it answers ``status`` (bounded); return that answer."""
    answers: list[httpx.Response] = []

    def answered() -> bool:
        answers.append(readyz(server, *exclude))
        return answers[-1].status_code == status

    try:
        wait_until(answered, timeout=60, what=f"/readyz {status}")
    except AssertionError:
        last = answers[-1]
        raise AssertionError(f"/readyz kept answering {last.status_code}: {last.text}") from None
    return answers[-1]


@contextlib.contextmanager
def refusing_database() -> Iterator[None]:
    """Make every new database connection fail (a closed port, or a directory that does not exist)."""
    saved = dict(connection.settings_dict)
    connection.close()
    if connection.vendor == "postgresql":
        connection.settings_dict["PORT"] = "1"
    else:
        connection.settings_dict["NAME"] = "/nonexistent-directory/custodian.sqlite3"
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.update(saved)


def test_ready_with_a_running_worker_then_not_once_its_heartbeat_is_older_than_the_bound(
    live_server, settings, tmp_path
):
    empty_broker()
    with celery_worker(tmp_path, beat=True):
        ready = wait_for_readyz(live_server, 200)
        started = WorkerHeartbeat.objects.get()
        # Then the tasks it takes (beat's sweep, every second here) keep its heartbeat fresh.
        wait_until(lambda: WorkerHeartbeat.objects.get().seen_at > started.seen_at, what="a task's heartbeat")
    node = started.node
    body = ready.json()
    assert body["status"] == "ready" and "failing" not in body
    assert list(body["checks"]) == CHECK_NAMES
    assert all(check["ok"] for check in body["checks"].values()), body
    assert body["checks"]["worker"]["workers_seen"] == 1
    assert body["checks"]["outbox"]["oldest_due_seconds"] == 0
    assert node.split("@")[0] not in ready.text and "127.0.0.1" not in ready.text

    settings.CUSTODIAN_READY_WORKER_SECONDS = 2  # the worker is gone: its heartbeat ages past the bound
    stale = wait_for_readyz(live_server, 503).json()
    assert stale["status"] == "unavailable" and stale["failing"] == ["worker"]
    assert stale["checks"]["worker"]["ok"] is False and stale["checks"]["worker"]["age_seconds"] >= 2
    assert stale["checks"]["worker"]["reason"] == "no worker seen for over 2 s"


def test_without_any_worker_seen_readyz_names_the_worker(live_server):
    response = readyz(live_server)
    assert response.status_code == 503
    assert response.json()["failing"] == ["worker"]
    assert response.json()["checks"]["worker"] == {"ok": False, "reason": "no worker seen"}


def test_an_entry_due_past_the_bound_is_not_ready_until_a_worker_applies_it(
    live_server, agent, settings, tmp_path
):
    settings.CUSTODIAN_READY_OUTBOX_SECONDS = 1
    empty_broker()
    proposal = submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    entry = OutboxEntry.objects.get(proposal=proposal)  # released and due, and no worker runs
    body = wait_for_readyz(live_server, 503, "worker").json()  # once the entry is due for over a second
    assert body["failing"] == ["outbox"] and body["excluded"] == ["worker"]
    assert body["checks"]["outbox"]["oldest_due_seconds"] >= 1
    assert body["checks"]["outbox"]["reason"] == "an entry has been due for over 1 s"
    with celery_worker(tmp_path, beat=True):
        wait_for_readyz(live_server, 200)
    entry.refresh_from_db()
    assert entry.status == OutboxEntry.Status.DONE


def test_a_webhook_due_past_the_bound_is_not_ready_until_the_notifications_queue_is_consumed(
    live_server, agent, settings, tmp_path
):
    settings.CUSTODIAN_READY_NOTIFICATIONS_SECONDS = 1
    empty_broker()
    with http_receiver("200") as receiver:
        endpoint(agent.tenant, receiver.url, "proposal.pending_review")
        submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))  # awaits review
        delivery = WebhookDelivery.objects.get()
        body = wait_for_readyz(live_server, 503, "worker").json()
        assert body["failing"] == ["notifications"], body
        assert body["checks"]["notifications"]["reason"] == "a notification has been due for over 1 s"
        assert body["checks"]["outbox"]["ok"]  # nothing was released to the executor
        with celery_worker(tmp_path, beat=True, queues=("executor", "notifications")):
            wait_for_readyz(live_server, 200)
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert receiver.ids() == [str(delivery.id)]


def test_a_retry_waiting_for_its_backoff_is_not_due_but_an_expired_lease_is(client, agent, settings):
    settings.CUSTODIAN_READY_NOTIFICATIONS_SECONDS = 60
    now = timezone.now()
    hook = endpoint(agent.tenant, "http://127.0.0.1:1/hook", "proposal.pending_review")
    failing = {"endpoint": hook, "tenant": agent.tenant, "event_type": "proposal.pending_review"}
    WebhookDelivery.objects.create(
        **failing, payload={}, occurred_at=now, attempts=4, next_attempt_at=now + timedelta(hours=1)
    )
    WebhookDelivery.objects.create(
        **failing, payload={}, occurred_at=now, status=WebhookDelivery.Status.DEAD, next_attempt_at=now
    )
    assert client.get("/readyz").json()["checks"]["notifications"] == {"ok": True, "oldest_due_seconds": 0}
    WebhookDelivery.objects.create(
        **failing,
        payload={},
        occurred_at=now,
        status=WebhookDelivery.Status.DELIVERING,
        next_attempt_at=now - timedelta(minutes=10),
        lease_expires_at=now - timedelta(seconds=90),
    )
    check = client.get("/readyz").json()["checks"]["notifications"]
    assert check["ok"] is False and check["oldest_due_seconds"] >= 90


def test_livez_answers_while_the_database_refuses_and_readyz_names_it(live_server):
    with refusing_database():
        live = httpx.get(f"{live_server.url}/livez", timeout=30)
        healthz = httpx.get(f"{live_server.url}/healthz", timeout=30)
        ready = readyz(live_server)
    assert (live.status_code, live.json()) == (200, {"status": "live"})
    assert (healthz.status_code, healthz.json()) == (200, {"status": "live"})
    assert ready.status_code == 503, ready.text
    body = ready.json()
    assert body["failing"] == ["database", "worker", "outbox", "notifications"]
    assert body["checks"]["database"]["reason"] == "OperationalError"
    assert body["checks"]["worker"]["reason"] == "database unavailable"
    assert "nonexistent" not in ready.text and "5432" not in ready.text


@pytest.mark.services
def test_unreachable_redis_names_the_broker_and_the_cache_and_answers_503(live_server, settings):
    settings.CELERY_BROKER_URL = f"{CLOSED_PORT}/0"
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": f"{CLOSED_PORT}/1"}}
    response = readyz(live_server, "worker")
    assert response.status_code == 503, response.text
    body = response.json()
    assert body["failing"] == ["broker", "cache"]
    assert body["checks"]["broker"] == {"ok": False, "reason": "unreachable"}
    assert body["checks"]["cache"] == {"ok": False, "reason": "unreachable"}
    assert body["checks"]["database"]["ok"] and body["checks"]["outbox"]["ok"]
    assert "127.0.0.1" not in response.text and "redis" not in response.text


@contextlib.contextmanager
def redis_server(port: int) -> Iterator[subprocess.Popen]:
    """A Redis of the test's own on ``port``, keeping nothing on disk; killed on the way out."""
    server = subprocess.Popen(
        [
            shutil.which("redis-server") or "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        yield server
    finally:
        server.kill()
        server.wait(timeout=30)


@pytest.mark.services
def test_stopping_a_running_redis_turns_ready_into_503_and_starting_it_again_back(live_server, settings):
    port = free_port()
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{port}/0"
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": f"redis://127.0.0.1:{port}/1"}}
    with redis_server(port):
        wait_for_readyz(live_server, 200, "worker")
    stopped = wait_for_readyz(live_server, 503, "worker").json()
    assert stopped["failing"] == ["broker", "cache"]
    assert stopped["checks"]["database"]["ok"] and stopped["checks"]["outbox"]["ok"]
    with redis_server(port):
        assert wait_for_readyz(live_server, 200, "worker").json()["status"] == "ready"


def test_a_filesystem_broker_without_its_folders_is_not_ready(live_server, settings, tmp_path):
    if settings.CELERY_BROKER_URL.startswith("redis"):
        pytest.skip("the embedded mode's filesystem broker")
    missing = str(tmp_path / "no-broker")
    options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        **options,
        "data_folder_in": missing,
        "data_folder_out": missing,
    }
    response = readyz(live_server, "worker")
    assert response.status_code == 503
    assert response.json()["failing"] == ["broker"]
    broker = response.json()["checks"]["broker"]
    assert broker == {"ok": False, "reason": "broker folder missing or not writable"}
    assert missing not in response.text


def test_a_throttled_readyz_answers_in_mgp_envelope_and_livez_is_never_throttled(live_server, settings):
    caches["default"].clear()  # this address's window starts empty
    settings.CUSTODIAN_API_RATE = "1/day"
    assert readyz(live_server).status_code in (200, 503)
    throttled = readyz(live_server)
    assert throttled.status_code == 429
    assert throttled.json()["error"] == {
        "code": "MGP_BACKEND_ERROR",
        "message": "Throttled",
        "details": {"retryable": True},
    }
    assert int(throttled.headers["Retry-After"]) >= 1
    for _ in range(3):
        assert httpx.get(f"{live_server.url}/livez", timeout=30).status_code == 200


def test_readyz_costs_six_queries_however_many_workers_and_entries(client, agent, django_assert_num_queries):
    now = timezone.now()
    WorkerHeartbeat.objects.bulk_create(
        WorkerHeartbeat(node=f"executor@host-{n}", seen_at=now - timedelta(seconds=n)) for n in range(20)
    )
    for n in range(5):
        memory = user_preference(preference_value=f"v{n}")
        submit(agent.agent, create_payload(memory, [make_evidence(agent.agent)]))
    entries = list(OutboxEntry.objects.order_by("created_at"))
    OutboxEntry.objects.filter(pk=entries[0].pk).update(available_at=now - timedelta(seconds=30))
    OutboxEntry.objects.filter(pk=entries[1].pk).update(
        status=OutboxEntry.Status.DISPATCHED, lease_expires_at=now - timedelta(seconds=90)
    )
    with django_assert_num_queries(6):  # SELECT 1, the heartbeat aggregate, two index heads, two due heads
        body = client.get("/readyz").json()
    assert body["checks"]["worker"]["workers_seen"] == 20 and body["checks"]["worker"]["age_seconds"] == 0
    assert body["checks"]["outbox"] == {"ok": True, "oldest_due_seconds": 90}
