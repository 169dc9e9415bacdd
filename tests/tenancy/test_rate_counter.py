"""The per-token rate: one fixed-window counter per caller, a batch charged per item, shared by processes.

Rates are per day so no assertion depends on how long the test takes.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from proposals.models import OutboxEntry, Proposal
from tenancy.models import AgentToken
from tests.factories import create_payload, make_evidence, user_preference

ROOT = Path(__file__).resolve().parents[2]
BATCH = "/api/v1/proposals/batch"


def _items(agent, count: int, prefix: str) -> list[dict]:
    evidence = [make_evidence(agent.agent)]
    return [
        {
            "idempotency_key": f"{prefix}-{n}",
            "proposal": create_payload(
                user_preference(
                    content={
                        "statement": f"Alice prefers cadence {prefix} {n}",
                        "preference_key": f"cadence_{prefix}_{n}",
                        "preference_value": f"v{n}",
                    }
                ),
                evidence,
            ),
        }
        for n in range(count)
    ]


def _gets_allowed(client, tries: int) -> int:
    return sum(client.get("/api/v1/proposals/").status_code == 200 for _ in range(tries))


def test_a_batch_of_n_items_costs_n_requests(agent, settings):
    items = _items(agent, 4, "n")
    settings.CUSTODIAN_API_RATE = "10/day"
    assert agent.client.post(BATCH, {"items": items}, format="json").status_code == 200
    assert _gets_allowed(agent.client, 8) == 6


def test_a_batch_that_does_not_fit_is_refused_whole_and_writes_nothing(agent, settings):
    items = _items(agent, 6, "t")
    settings.CUSTODIAN_API_RATE = "5/day"
    refused = agent.client.post(BATCH, {"items": items}, format="json")
    assert refused.status_code == 429 and refused.json()["code"] == "throttled"
    assert refused["Content-Type"] == "application/problem+json" and int(refused["Retry-After"]) > 3600
    assert Proposal.objects.count() == 0 and OutboxEntry.objects.count() == 0
    # The refused items were given back: the request itself counted once, four remain.
    assert agent.client.post(BATCH, {"items": items[:4]}, format="json").status_code == 200
    assert Proposal.objects.count() == 4
    assert _gets_allowed(agent.client, 2) == 0


def test_invalid_items_count_too(agent, settings):
    items = _items(agent, 3, "i")
    items[1]["proposal"]["memory"]["confidence"] = 7
    settings.CUSTODIAN_API_RATE = "4/day"
    response = agent.client.post(BATCH, {"items": items}, format="json")
    assert [r["status"] for r in response.json()["results"]] == [201, 400, 201]
    assert _gets_allowed(agent.client, 3) == 1


def test_a_batch_spends_its_own_tokens_rate_only(agent, other_agent, settings):
    items = _items(agent, 5, "o")
    settings.CUSTODIAN_API_RATE = "5/day"
    assert agent.client.post(BATCH, {"items": items}, format="json").status_code == 200
    assert agent.client.get("/api/v1/proposals/").status_code == 429
    assert _gets_allowed(other_agent.client, 5) == 5


@pytest.mark.services
def test_the_counter_is_shared_with_other_processes(agent, settings):
    """Another process spending the token's window (as another gunicorn worker would) throttles this one."""
    settings.CUSTODIAN_API_RATE = "10/day"
    assert _gets_allowed(agent.client, 1) == 1
    token = AgentToken.objects.get(agent=agent.agent)
    spend = (
        "import django; django.setup(); from tenancy.throttling import _take; "
        f"print(_take('rate:token:{token.pk}', 8, 86400)[0])"
    )
    result = subprocess.run(
        [sys.executable, "-c", spend],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["9"]  # it saw this process's request
    assert _gets_allowed(agent.client, 3) == 1


@pytest.mark.services
def test_counting_a_request_is_one_redis_round_trip(agent, settings, monkeypatch):
    import redis.connection

    from tenancy.throttling import TokenRateThrottle

    sent: list[bytes] = []
    send = redis.connection.AbstractConnection.send_packed_command

    def counting(connection, command, check_health=True):
        sent.append(command if isinstance(command, bytes) else b"".join(command))
        return send(connection, command, check_health)

    request = type("Request", (), {"auth": AgentToken.objects.get(agent=agent.agent)})()
    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", counting)
    assert TokenRateThrottle().allow_request(request, None)
    assert len(sent) == 1 and b"INCRBY" in sent[0]


@pytest.mark.services
def test_the_redis_cache_builds_one_client_per_pool():
    from django.core.cache import caches

    backend = caches["default"]._cache
    assert backend.get_client("a", write=True) is backend.get_client("b", write=True)
