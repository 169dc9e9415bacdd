"""/metrics over real HTTP while a real executor worker applies what was submitted.

Both modes: the embedded default (SQLite, the filesystem broker, the worker on the test
database file) and PostgreSQL with Redis. The live server runs in this process, without a
multiprocess directory, so its scrape shows what this process counted plus the database's
gauges; ``test_multiprocess`` scrapes gunicorn, where the worker's own counts join in.
"""

import re

import httpx
import pytest

from executor.models import Receipt
from proposals.models import Proposal
from tests.factories import create_payload, make_evidence, user_preference
from tests.metrics.scraping import Scrape, bearer, parse
from tests.workers import celery_worker, empty_broker, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

SUBMIT = {"route": "/api/v1/proposals/", "method": "POST", "status": "201"}
UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.I)


def scrape(server) -> Scrape:
    response = httpx.get(f"{server.url}/metrics", headers=bearer(), timeout=30)
    assert response.status_code == 200, response.text
    return parse(response.text)


def test_a_scrape_counts_an_applied_submit_and_a_refusal_and_reads_the_backlog_drained(
    live_server, agent, metrics_token, tmp_path
):
    empty_broker()
    before = scrape(live_server)
    payload = create_payload(user_preference(), [make_evidence(agent.agent)])
    with httpx.Client(base_url=live_server.url, timeout=30) as client, celery_worker(tmp_path, beat=True):
        submitted = client.post(
            "/api/v1/proposals/", json=payload, headers={**bearer(agent.token), "Idempotency-Key": "m-1"}
        )
        assert submitted.status_code == 201, submitted.text
        proposal_id = submitted.json()["id"]
        refused = client.post(
            "/api/v1/proposals/",
            json={"action": "create"},
            headers={**bearer(agent.token), "Idempotency-Key": "m-2"},
        )
        assert refused.status_code == 400 and refused.json()["code"] == "validation_error"
        assert client.get(f"/api/v1/proposals/{proposal_id}/", headers=bearer("wrong")).status_code == 401
        wait_until(lambda: Receipt.objects.filter(proposal_id=proposal_id).exists(), what="the receipt")
        wait_until(lambda: scrape(live_server).value("custodian_workers_seen") >= 1, what="a heartbeat")
        after = scrape(live_server)

    rule = Proposal.objects.get(pk=proposal_id).matched_rule
    submitted_count = "custodian_proposals_submitted_total"
    assert (
        after.value(submitted_count, classification="auto_apply", rule=rule)
        - before.value(submitted_count, classification="auto_apply", rule=rule)
        == 1
    )
    count = "custodian_http_request_duration_seconds_count"
    assert after.value(count, **SUBMIT) - before.value(count, **SUBMIT) == 1
    assert after.value("custodian_http_request_duration_seconds_bucket", **SUBMIT, le="+Inf") >= 1
    refusals = "custodian_refusals_total"
    for code, status in (("validation_error", "400"), ("not_authenticated", "401")):
        assert (
            after.value(refusals, code=code, status=status) - before.value(refusals, code=code, status=status)
            == 1
        )
    detail = {"route": "/api/v1/proposals/<uuid:proposal_id>/", "method": "GET", "status": "401"}
    assert after.value(count, **detail) - before.value(count, **detail) == 1
    assert after.value("custodian_outbox_due_entries") == 0
    assert after.value("custodian_outbox_oldest_due_age_seconds") == 0
    assert 0 <= after.value("custodian_worker_heartbeat_age_seconds") < 120
    assert after.value("custodian_metrics_database_up") == 1
    assert not any(UUID.search(value) for _, value in after.label_values())


def test_a_recall_is_timed_by_its_surface(live_server, agent, metrics_token, applied_memory):
    before = scrape(live_server).value("custodian_recall_duration_seconds_count", surface="rest")
    answer = httpx.post(
        f"{live_server.url}/api/v1/recall/search",
        json={
            "query": "weekly summaries",
            "policy_context": {"acting_for_subject": {"kind": "user", "id": "pm-alice"}},
        },
        headers=bearer(agent.token),
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    after = scrape(live_server)
    assert after.value("custodian_recall_duration_seconds_count", surface="rest") - before == 1
    assert after.value("custodian_recall_duration_seconds_bucket", surface="rest", le="+Inf") >= 1
