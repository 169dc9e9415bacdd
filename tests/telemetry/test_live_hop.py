"""A request followed across processes: a real gunicorn web server, the outbox, a real Celery worker.

Both run with ``CUSTODIAN_LOG_FORMAT=json`` and export spans over OTLP/HTTP to a receiver this
test serves; their output is read back and every line parsed as JSON. Runs on the embedded
default (SQLite, filesystem broker) and on PostgreSQL and Redis (as the least-privilege roles).
"""

import json
from pathlib import Path

import httpx
import pytest
from django.db import connection
from django.utils import timezone

from health.models import WorkerHeartbeat
from proposals.models import OutboxEntry
from tests.telemetry.otlp import otlp_receiver
from tests.telemetry.processes import web_server
from tests.workers import celery_worker, empty_broker, wait_until

pytestmark = pytest.mark.django_db(transaction=True)
STATEMENT = "Alice wants her summaries read aloud by a lighthouse keeper"
QUERY = "lighthouse keeper narration unusual-recall-words"


def _lines(path: Path) -> list[dict]:
    """Every line a process logged (its stderr), each of which must be one JSON object."""
    text = path.read_text(errors="replace") if path.exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture
def json_env(monkeypatch):
    monkeypatch.setenv("CUSTODIAN_LOG_FORMAT", "json")
    monkeypatch.setenv("LOG_LEVEL", "INFO")
    empty_broker()


def _submit(url: str, agent, correlation_id: str) -> httpx.Response:
    auth = {"Authorization": f"Bearer {agent.token}"}
    evidence = httpx.post(
        f"{url}/api/v1/evidence/",
        headers=auth,
        json={"kind": "conversation", "external_ref": "chat/alice/7", "content": {"text": "Read it aloud."}},
    ).json()
    body = {
        "action": "create",
        "memory": {
            "subject": {"kind": "user", "id": "pm-alice"},
            "scope": "user",
            "type": "preference",
            "content": {"statement": STATEMENT, "preference_key": "narrator", "preference_value": "keeper"},
        },
        "evidence": [
            {"evidence_id": evidence["evidence_id"], "revision": 1, "content_hash": evidence["content_hash"]}
        ],
        "policy_context": {
            "acting_for_subject": {"kind": "user", "id": "pm-alice"},
            "consent_basis": "explicit",
            "risk_level": "low",
        },
    }
    headers = auth | {"Idempotency-Key": "live-telemetry-1", "X-Correlation-Id": correlation_id}
    return httpx.post(f"{url}/api/v1/proposals/", headers=headers, json=body, timeout=30)


def _receipt(url: str, agent, proposal_id: str) -> dict | None:
    auth = {"Authorization": f"Bearer {agent.token}"}
    results = httpx.get(f"{url}/api/v1/receipts/", params={"proposal": proposal_id}, headers=auth).json()
    return results["results"][0] if results["results"] else None


def _applied_lines(path: Path, proposal_id: str) -> list[dict]:
    return [
        line
        for line in _lines(path)
        if line["event"] == "entry.applied" and line["proposal_id"] == proposal_id
    ]


def _searched(otlp) -> list[str]:
    """The statements of the search request's trace, as its spans say them."""
    traces = {span.trace_id for span in otlp.spans if "recall/search" in span.name}
    return [span.attributes.get("db.statement", "") for span in otlp.spans if span.trace_id in traces]


def test_a_submit_is_followed_from_the_web_line_to_the_executor_line_and_span(
    agent, tmp_path, json_env, monkeypatch
):
    with otlp_receiver() as otlp:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.url)
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "200")
        worker = celery_worker(tmp_path, beat=True, stderr=tmp_path / "worker.err")
        with worker, web_server(tmp_path / "web.log") as url:
            response = _submit(url, agent, correlation_id="journey-live-1")
            assert response.status_code == 201, response.text
            proposal_id = response.json()["id"]
            wait_until(lambda: _receipt(url, agent, proposal_id), timeout=60, what="the receipt")
            receipt = _receipt(url, agent, proposal_id)
            httpx.post(
                f"{url}/api/v1/recall/search",
                headers={"Authorization": f"Bearer {agent.token}"},
                json={
                    "query": QUERY,
                    "policy_context": {"acting_for_subject": {"kind": "user", "id": "pm-alice"}},
                },
            )
            worker_log = tmp_path / "worker.err"
            wait_until(
                lambda: _applied_lines(worker_log, proposal_id), timeout=60, what="the executor's line"
            )
            traceparent = OutboxEntry.objects.get(proposal_id=proposal_id).trace_context["traceparent"]
            _, trace_id, submit_span_id, _ = traceparent.split("-")
            wait_until(
                lambda: (
                    otlp.named("custodian.apply")
                    and any(s.span_id == submit_span_id for s in otlp.spans)
                    and (_searched(otlp) or connection.vendor != "postgresql")
                ),
                timeout=60,
                what="the web and executor spans",
            )

    request_id = response.headers["X-Request-Id"]
    assert response.headers["X-Correlation-Id"] == "journey-live-1"
    web_lines = _lines(tmp_path / "web.log")
    [access] = [
        line for line in web_lines if line.get("route") == "api/v1/proposals/" and line["method"] == "POST"
    ]
    assert (access["status"], access["proposal_id"], access["request_id"]) == (201, proposal_id, request_id)
    assert access["agent_id"] == str(agent.agent.pk) and access["correlation_id"] == "journey-live-1"

    [applied] = _applied_lines(tmp_path / "worker.err", proposal_id)
    assert (applied["request_id"], applied["correlation_id"]) == (request_id, "journey-live-1")
    assert (applied["outcome"], applied["receipt_seq"]) == ("applied", receipt["seq"])
    assert receipt["hash"].startswith(applied["receipt_hash"]) and applied["duration_ms"] >= 0

    if connection.vendor == "postgresql":  # the first stage's candidate read, in binary, is a span too
        assert any('"search_vector" @@' in statement and "%s" in statement for statement in _searched(otlp))

    [submit_span] = [span for span in otlp.spans if span.span_id == submit_span_id]
    assert (submit_span.service, submit_span.trace_id) == ("custodian-web", trace_id)
    linked = [span for span in otlp.named("custodian.apply") if (trace_id, submit_span_id) in span.links]
    assert linked and linked[0].service == "custodian-executor"

    everything = (tmp_path / "web.log").read_text() + (tmp_path / "worker.err").read_text()
    assert (
        STATEMENT not in everything
        and "lighthouse" not in everything
        and "unusual-recall-words" not in everything
    )
    assert agent.token not in everything


def test_an_idle_worker_logs_nothing_about_its_sweeps_at_info(db, tmp_path, json_env):
    with celery_worker(tmp_path, beat=True, stderr=tmp_path / "worker.err"):
        worker_log = tmp_path / "worker.err"
        wait_until(lambda: any("ready" in line["event"] for line in _lines(worker_log)), what="the worker")
        started = timezone.now()
        # The heartbeat is touched as tasks start, at most every 5 s: moving on twice, only sweeps ran.
        wait_until(
            lambda: WorkerHeartbeat.objects.filter(
                seen_at__gt=started + timezone.timedelta(seconds=5)
            ).exists(),
            timeout=90,
            what="beat's sweeps to run on the idle worker",
        )
    lines = _lines(worker_log)
    assert lines and all(line["level"] != "debug" for line in lines)
    assert not [line for line in lines if "sweep" in json.dumps(line) or "Sending due task" in line["event"]]
