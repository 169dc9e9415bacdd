"""Who may do what: every endpoint and review view against every kind of caller; each refusal audited."""

import uuid

import pytest
from rest_framework.test import APIClient

from executor.models import Receipt
from reviews.selectors import AUDIT
from tenancy.models import DeniedRequest
from tenancy.services import issue_user_token
from tests.factories import create_payload, factor_fact, make_evidence, make_person, submit


@pytest.fixture
def world(agent, other_agent, applied_memory):
    """Tenant A's objects, and one client per kind of caller."""
    evidence = make_evidence(agent.agent)
    pending = submit(agent.agent, create_payload(factor_fact(), [evidence]))
    receipt = Receipt.objects.get(memory_id=applied_memory.id)
    linked = make_person("linked", agent.tenant)
    agent.agent.user = linked
    agent.agent.save(update_fields=["user"])

    def person(user):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_user_token(user=user)[1]}")
        client.force_login(user)  # the review UI uses the session
        return client

    return {
        "ids": {"p": pending.pk, "m": applied_memory.id, "e": evidence.source_id, "r": receipt.pk},
        "agent": agent.client,
        "other_agent": other_agent.client,
        "reviewer": person(make_person("reviewer", agent.tenant)),
        "stranger": person(make_person("stranger")),
        "auditor": person(make_person("auditor", agent.tenant, AUDIT)),
        "linked": person(linked),
        "anonymous": APIClient(),
    }


DECIDE = "decide"
MATRIX = [
    # (caller, method, path, expected status)
    ("agent", "get", "/api/v1/proposals/{p}/", 200),
    ("other_agent", "get", "/api/v1/proposals/{p}/", 404),
    ("reviewer", "get", "/api/v1/proposals/{p}/", 403),
    ("anonymous", "get", "/api/v1/proposals/{p}/", 401),
    ("other_agent", "post", "/api/v1/proposals/{p}/withdraw/", 404),
    ("agent", "get", "/api/v1/memories/{m}/", 200),
    ("other_agent", "get", "/api/v1/memories/{m}/", 404),
    ("anonymous", "get", "/api/v1/memories/{m}/", 401),
    ("agent", "get", "/api/v1/evidence/{e}/", 200),
    ("other_agent", "get", "/api/v1/evidence/{e}/", 404),
    ("agent", "get", "/api/v1/receipts/{r}/", 200),
    ("other_agent", "get", "/api/v1/receipts/{r}/", 404),
    ("auditor", "get", "/api/v1/receipts/{r}/", 403),
    ("reviewer", "get", "/api/v1/reviews/queue/", 200),
    ("agent", "get", "/api/v1/reviews/queue/", 403),
    ("anonymous", "get", "/api/v1/reviews/queue/", 401),
    ("stranger", DECIDE, "/api/v1/proposals/{p}/decisions/", 404),
    ("auditor", DECIDE, "/api/v1/proposals/{p}/decisions/", 403),
    ("linked", DECIDE, "/api/v1/proposals/{p}/decisions/", 403),
    ("agent", DECIDE, "/api/v1/proposals/{p}/decisions/", 403),
    ("anonymous", DECIDE, "/api/v1/proposals/{p}/decisions/", 401),
    ("agent", "get", "/api/v1/audit/events/", 200),
    ("auditor", "get", "/api/v1/audit/events/", 200),
    ("anonymous", "get", "/api/v1/audit/events/", 401),
    ("reviewer", "get", "/review/proposals/{p}/", 200),
    ("auditor", "get", "/review/proposals/{p}/", 200),
    ("linked", "get", "/review/proposals/{p}/", 200),
    ("stranger", "get", "/review/proposals/{p}/", 404),
    ("stranger", "get", "/review/proposals/{p}/receipt/", 404),
    ("anonymous", "get", "/review/proposals/{p}/", 302),
    ("stranger", "post", "/review/proposals/{p}/decide-together/", 404),
    ("anonymous", "post", "/review/proposals/{p}/decide-together/", 302),
]


def _call(world, caller, method, path):
    client, url = world[caller], path.format(**world["ids"])
    if method == DECIDE:
        body = {"decision": "approve", "reason": "matrix", "action_digest": "a" * 64}
        return client.post(url, body, format="json")
    return getattr(client, method)(url)


@pytest.mark.parametrize(("caller", "method", "path", "status"), MATRIX)
def test_each_caller_gets_exactly_the_designed_access(world, caller, method, path, status):
    before = DeniedRequest.objects.count()
    response = _call(world, caller, method, path)
    assert response.status_code == status, response.content[:300]
    audited = DeniedRequest.objects.count() - before
    assert audited == (1 if status in (401, 403, 404) else 0)
    if status in (401, 403, 404) and path.startswith("/api/"):
        assert response["Content-Type"] == "application/problem+json"


def test_filters_reveal_nothing_about_other_tenants(world):
    foreign = world["other_agent"]
    by_real_id = foreign.get(f"/api/v1/receipts/?proposal={world['ids']['p']}&memory={world['ids']['m']}")
    by_random_id = foreign.get(f"/api/v1/receipts/?proposal={uuid.uuid4()}&memory={uuid.uuid4()}")
    assert by_real_id.json() == by_random_id.json() == {"next": None, "previous": None, "results": []}


def test_denied_attempts_name_the_caller_and_tenant(world, agent):
    _call(world, "other_agent", "get", "/api/v1/memories/{m}/")
    denied = DeniedRequest.objects.latest("id")
    assert (denied.status, denied.code, denied.agent.name) == (404, "not_found", "intruder-agent")
    assert denied.tenant.name == "other-desk"
