"""MGP calls that outlive or exceed the caller's authority: tasks, cursors and merges, over HTTP.

Attackers: another agent of the same tenant holding a task id, a runtime whose
acting-for grant was revoked after it started a task, and an agent patching a
memory it may not read.
"""

import pytest
from django.core.management import call_command

from memory_core.models import Memory
from proposals.models import Proposal
from tests.factories import AgentHandle, make_agent
from tests.mgp.conftest import ALICE, PROFILE, call, memory, settle, written

pytestmark = pytest.mark.django_db

DEFAULT_READ_RULES = PROFILE.parents[1] / "memory_core" / "read_rules.yaml"


@pytest.fixture
def colleague(runtime) -> AgentHandle:
    """Another agent of the runtime's tenant, granted nothing for Alice."""
    return make_agent(runtime.tenant.name, "nanobot-colleague", acts_for=())


def _itself(handle: AgentHandle) -> dict:
    return {"kind": "agent", "id": handle.agent.name}


def _poll(handle: AgentHandle, task_id: str, op: str = "tasks/get"):
    return handle.client.post(f"/mgp/{op}", {"request_id": "poll", "task_id": task_id}, format="json")


def _error(response) -> dict:
    body = response.json()
    assert body["status"] == "error" and body["data"] is None, body
    return body["error"]


def _revoke_alice(handle: AgentHandle) -> None:
    call_command(
        "revoke_delegation",
        "--tenant",
        handle.tenant.name,
        "--agent",
        handle.agent.name,
        "--subject",
        "user:alice",
        stdout=open("/dev/null", "w"),  # noqa: SIM115
    )


def _async_export(handle: AgentHandle) -> str:
    response = call(handle, "export", {"execution_mode": "async", "limit": 100}, "read")
    assert response.status_code == 202, response.json()
    return response.json()["data"]["task"]["task_id"]


# --- tasks belong to the agent that started them ----------------------------------------------


def test_another_agent_of_the_tenant_cannot_read_an_export_task(runtime, colleague):
    written(runtime, memory(statement="Alice's locker code is quince-31."))
    task_id = _async_export(runtime)
    stolen = _poll(colleague, task_id)
    missing = _poll(colleague, "00000000-0000-4000-8000-000000000000")
    assert stolen.status_code == missing.status_code == 404
    assert _error(stolen)["code"] == _error(missing)["code"] == "MGP_TASK_NOT_FOUND"
    assert _error(stolen)["message"] == _error(missing)["message"]
    assert "quince" not in str(stolen.json())
    assert _poll(runtime, task_id).json()["data"]["task"]["status"] == "completed"


def test_another_agent_of_the_tenant_cannot_read_or_cancel_a_write_task(runtime, colleague):
    response = call(runtime, "write", {"memory": memory(statement="Alice's alias is medlar-8.")}, "write")
    task = settle(response)
    assert _error(_poll(colleague, task["task_id"]))["code"] == "MGP_TASK_NOT_FOUND"
    assert _error(_poll(colleague, task["task_id"], "tasks/cancel"))["code"] == "MGP_TASK_NOT_FOUND"
    assert _poll(runtime, task["task_id"]).json()["data"]["task"]["status"] == "completed"


# --- tasks re-check the acting-for grant at every read -----------------------------------------


def test_an_export_task_serves_nothing_once_its_grant_is_revoked(runtime, settings):
    settings.CUSTODIAN_READ_POLICY_FILE = DEFAULT_READ_RULES  # Alice's own confidential memories: raw
    written(runtime, memory(statement="Alice's diagnosis is rowan-12.", sensitivity="confidential"))
    task_id = _async_export(runtime)
    served = _poll(runtime, task_id).json()["data"]["task"]["result"]
    assert "rowan-12" in str(served)  # while the grant is live, Alice's runtime reads her memory raw

    _revoke_alice(runtime)
    other = make_agent(runtime.tenant.name, "nanobot-scribe", acts_for=(ALICE,))
    written(other, memory(statement="Alice's new diagnosis is sorb-44.", sensitivity="confidential"))

    refused = _poll(runtime, task_id)
    assert refused.status_code == 403
    error = _error(refused)
    assert error["code"] == "MGP_POLICY_DENIED" and error["details"]["rule"] == "acting_for_not_granted"
    assert "rowan" not in str(refused.json()) and "sorb" not in str(refused.json())
    rest = runtime.client.get(f"/api/v1/memories/{Memory.objects.first().pk}/?acting_for=user:alice")
    assert rest.status_code == 403 and rest.json()["code"] == "acting_for_not_granted"


def test_a_write_task_serves_nothing_once_its_grant_is_revoked(runtime, settings):
    settings.CUSTODIAN_READ_POLICY_FILE = DEFAULT_READ_RULES
    mem = memory(statement="Alice's pet is called hawthorn-5.", sensitivity="confidential")
    task = settle(call(runtime, "write", {"memory": mem}, "write"))
    _revoke_alice(runtime)
    refused = _poll(runtime, task["task_id"])
    assert refused.status_code == 403 and _error(refused)["details"]["rule"] == "acting_for_not_granted"
    assert "hawthorn" not in str(refused.json())


# --- a merge never reads what its caller could not ---------------------------------------------


@pytest.mark.parametrize("sensitivity", ["confidential", "restricted"])
def test_an_update_by_an_agent_who_may_not_read_copies_nothing(runtime, colleague, sensitivity):
    written(
        runtime,
        memory("mem_secret", statement="Alice's safe opens with 7-7-3 juniper.", sensitivity=sensitivity),
    )
    patch = {"content": {"note": "appended"}}
    response = call(
        colleague, "update", {"memory_id": "mem_secret", "patch": patch}, "update", subject=_itself(colleague)
    )
    assert response.json()["status"] == "error", response.json()
    assert _error(response)["code"] in ("MGP_POLICY_DENIED", "MGP_MEMORY_NOT_FOUND")
    assert not response.json()["error"]["details"].get("retryable")
    mine = Proposal.objects.filter(submitted_by=colleague.agent)
    assert "juniper" not in str(list(mine.values()))
    assert Memory.objects.get().content["statement"] == "Alice's safe opens with 7-7-3 juniper."


def test_an_update_of_a_fenced_memory_copies_nothing(runtime):
    written(runtime, memory("mem_fenced", statement="Alice's route home passes larch-19."))
    stored = Memory.objects.get()
    from memory_core.models import MemoryEvidence

    link = MemoryEvidence.objects.filter(memory=stored).select_related("evidence_revision").first()
    link.evidence_revision.status = "invalidated"
    link.evidence_revision.save(update_fields=["status"])
    patch = {"content": {"note": "appended"}}
    response = call(runtime, "update", {"memory_id": "mem_fenced", "patch": patch}, "update")
    assert _error(response)["code"] in ("MGP_POLICY_DENIED", "MGP_MEMORY_NOT_FOUND")
    assert "larch" not in str(list(Proposal.objects.filter(action="update").values()))


def test_a_merge_write_by_an_agent_who_may_not_read_copies_nothing(runtime, colleague):
    secret = {"statement": "Alice's vault word is olive-62.", "vault": "olive-62"}
    written(runtime, memory("mem_merge", content=secret, sensitivity="confidential"))
    incoming = memory("mem_merge", content={"statement": "Alice's vault word changed.", "note": "new"})
    hint = {"strategy": "merge"}
    response = call(
        colleague, "write", {"memory": incoming, "merge_hint": hint}, "write", subject=_itself(colleague)
    )
    assert response.json()["status"] == "error", response.json()
    assert "olive" not in str(list(Proposal.objects.filter(submitted_by=colleague.agent).values()))


def test_the_owner_still_patches_what_they_may_read(runtime):
    written(runtime, memory("mem_mine", statement="Alice likes plum tea."))
    patch = {"content": {"note": "with honey"}}
    response = call(runtime, "update", {"memory_id": "mem_mine", "patch": patch}, "update")
    assert response.status_code in (200, 202), response.json()
    (proposal,) = Proposal.objects.filter(action="update")
    assert "plum tea" in str(proposal.fields)
