"""MGP over HTTP, in process: the MGP profile, no waiting (the test applies through the executor)."""

import uuid
from pathlib import Path

import pytest

from proposals.models import Proposal
from tests.factories import AgentHandle, apply_released, make_agent

PROFILE = Path(__file__).resolve().parents[2] / "mgp" / "profile"
ALICE = {"kind": "user", "id": "alice"}


@pytest.fixture(autouse=True)
def _mgp_profile(settings):
    settings.CUSTODIAN_POLICY_FILE = PROFILE / "rules.yaml"
    settings.CUSTODIAN_READ_POLICY_FILE = PROFILE / "read_rules.yaml"
    settings.CUSTODIAN_MGP_WAIT_SECONDS = 0


@pytest.fixture
def runtime(db) -> AgentHandle:
    return make_agent("desk-a", "nanobot-main", acts_for=(ALICE, {"kind": "org", "id": "quant-desk"}))


@pytest.fixture
def intruder(db) -> AgentHandle:
    return make_agent("desk-b", "nanobot-other", acts_for=(ALICE,))


def context(handle: AgentHandle, action: str, **extra) -> dict:
    return {
        "actor_agent": handle.agent.name,
        "acting_for_subject": extra.pop("subject", ALICE),
        "requested_action": action,
        "tenant_id": handle.tenant.name,
        **extra,
    }


def call(handle: AgentHandle, op: str, payload: dict, action: str, headers: dict | None = None, **ctx):
    body = {
        "request_id": f"req_{uuid.uuid4().hex}",
        "policy_context": context(handle, action, **ctx),
        "payload": payload,
    }
    return handle.client.post(f"/mgp/{op}", body, format="json", headers=headers or {})


def memory(memory_id: str | None = None, *, statement: str = "Alice prefers dark mode.", **fields) -> dict:
    return {
        "memory_id": memory_id or f"mem_{uuid.uuid4().hex}",
        "subject": fields.pop("subject", ALICE),
        "scope": fields.pop("scope", "user"),
        "type": fields.pop("type", "preference"),
        "content": fields.pop("content", {"statement": statement, "theme": "dark"}),
        "source": {"kind": "chat", "ref": "chat:alice:1"},
        "created_at": "2026-11-30T12:00:00Z",
        "sensitivity": fields.pop("sensitivity", "internal"),
        **fields,
    }


def settle(response) -> dict:
    """Apply the write a response is waiting on through the executor; return the task id."""
    task = response.json()["data"]["task"]
    for proposal in Proposal.objects.filter(status=Proposal.Status.RELEASED):
        apply_released(proposal)
    return task


def written(handle: AgentHandle, mem: dict, **payload) -> dict:
    """Write through MGP and apply it; return tasks/get's completed result."""
    response = call(handle, "write", {"memory": mem, **payload}, "write")
    assert response.status_code == 202, response.json()
    task = settle(response)
    done = handle.client.post(
        "/mgp/tasks/get", {"request_id": "poll", "task_id": task["task_id"]}, format="json"
    )
    assert done.json()["data"]["task"]["status"] == "completed", done.json()
    return done.json()["data"]["task"]["result"]


def verb(handle: AgentHandle, op: str, memory_id: str) -> dict:
    """A lifecycle verb, applied by the executor; return its data (purge of a live memory: two proposals)."""
    for _ in range(2):
        response = call(handle, op, {"memory_id": memory_id, "reason": "test"}, op)
        if response.status_code != 202:
            return response.json()["data"]
        task = settle(response)
        done = handle.client.post(
            "/mgp/tasks/get", {"request_id": "p", "task_id": task["task_id"]}, format="json"
        )
        result = done.json()["data"]["task"]["result"]
        if op != "purge" or result["state"] == "purged":
            return result
    raise AssertionError("not applied")
