"""MGP's own Python SDK (mgp-client) against Custodian: the whole WSGI stack, in process.

Writes are applied by the executor service (``apply_released``), so a write
the policy lets through answers 202 and completes; a write that needs a PM
stays pending until one approves over REST.
"""

import httpx
import pytest
from django.test import Client
from mgp_client import AuditQuery, BearerAuth, MGPClient, PolicyContextBuilder, SearchQuery
from mgp_client.errors import MemoryNotFoundError
from rest_framework.test import APIClient

from proposals.models import Proposal
from tenancy.services import issue_user_token
from tests.factories import apply_released, make_person
from tests.mgp.conftest import memory

pytestmark = pytest.mark.django_db


def _apply_all() -> None:
    for proposal in Proposal.objects.filter(status=Proposal.Status.RELEASED):
        apply_released(proposal)


class DjangoTransport(httpx.BaseTransport):
    """Hand the SDK's requests to Django's test client: the whole stack, inside the test's transaction."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        response = Client().generic(
            request.method,
            request.url.path,
            data=request.read(),
            content_type=request.headers.get("content-type", "application/json"),
            headers=headers,
        )
        return httpx.Response(response.status_code, headers=dict(response.items()), content=response.content)


@pytest.fixture
def sdk(runtime):
    with MGPClient(
        "http://testserver", auth=BearerAuth(runtime.token), transport=DjangoTransport()
    ) as client:
        yield client


@pytest.fixture
def ctx(runtime):
    return PolicyContextBuilder(
        actor_agent=runtime.agent.name,
        subject_id="alice",
        tenant_id=runtime.tenant.name,
        correlation_id="sdk-1",
    )


def _written(sdk, ctx, mem) -> dict:
    response = sdk.write_memory(ctx.build("write"), mem)
    assert response.status == "ok"
    _apply_all()
    task = sdk.get_task(response.data["task"]["task_id"])
    assert task["status"] == "completed", task
    return task["result"]


def test_the_sdk_writes_searches_gets_retires_and_audits(sdk, ctx):
    assert sdk.get_capabilities()["manifest"]["adapter_name"] == "custodian"
    result = _written(sdk, ctx, memory("mem_sdk", statement="Alice prefers weekly summaries."))
    assert result["memory"]["memory_id"] == "mem_sdk" and result["resolution"] == "created"

    found = sdk.search_memory(ctx.build("search"), SearchQuery(query="weekly summaries", limit=5))
    assert [item["memory"]["memory_id"] for item in found.data["results"]] == ["mem_sdk"]
    got = sdk.get_memory(ctx.build("read"), "mem_sdk")
    assert got.data["consumable_text"] == "Alice prefers weekly summaries."

    expire = sdk.expire_memory(ctx.build("expire"), "mem_sdk", reason="quarter ended")
    _apply_all()
    assert sdk.get_task(expire.data["task"]["task_id"])["result"]["state"] == "expired"
    assert (
        sdk.get_memory(ctx.build("read"), "mem_sdk").data["memory"]["backend_ref"]["mgp_state"] == "expired"
    )
    assert not sdk.search_memory(ctx.build("search"), SearchQuery(query="weekly summaries")).data["results"]

    events = sdk.query_audit(ctx.build("read"), AuditQuery(target_memory_id="mem_sdk")).data["events"]
    assert {"write", "read", "expire"} <= {event["action"] for event in events}
    assert all(event["correlation_id"] == "sdk-1" for event in events)
    with pytest.raises(MemoryNotFoundError):
        sdk.get_memory(ctx.build("read"), "mem_never")


def test_a_review_pending_write_completes_when_a_pm_approves_over_rest(sdk, ctx, runtime):
    desk = PolicyContextBuilder(
        actor_agent=runtime.agent.name,
        subject_kind="org",
        subject_id="quant-desk",
        tenant_id=runtime.tenant.name,
    )
    fact = memory(
        "mem_factor",
        subject={"kind": "org", "id": "quant-desk"},
        scope="org",
        type="semantic_fact",
        content={"statement": "momentum_12_1 IC is unstable", "fact": "unstable"},
    )
    task = sdk.write_memory(desk.build("write"), fact).data["task"]
    assert sdk.get_task(task["task_id"])["status"] == "pending"

    proposal = Proposal.objects.get(status=Proposal.Status.PENDING_REVIEW)
    pm = APIClient()
    pm.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_user_token(user=make_person('pm', runtime.tenant))[1]}")
    decision = {
        "decision": "approve",
        "reason": "checked the IC table",
        "represented_owner": "",
        "action_digest": proposal.action_digest,
    }
    assert pm.post(f"/api/v1/proposals/{proposal.pk}/decisions/", decision, format="json").status_code == 201
    _apply_all()
    done = sdk.wait_for_task(task["task_id"], timeout_seconds=5, poll_interval_seconds=0.1)
    assert done["status"] == "completed"
    assert done["result"]["memory"]["content"]["statement"] == "momentum_12_1 IC is unstable"
