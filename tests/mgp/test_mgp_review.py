"""An MGP write that policy routes to people: 202 with a task, decided over REST, or withdrawn."""

import pytest
from rest_framework.test import APIClient

from proposals.models import Proposal
from tenancy.services import issue_user_token
from tests.factories import apply_released, make_person
from tests.mgp.conftest import call, memory

pytestmark = pytest.mark.django_db
DESK = {"kind": "org", "id": "quant-desk"}


def _fact(memory_id: str) -> dict:
    content = {"statement": "momentum_12_1 IC is unstable after neutralisation", "fact": "unstable IC"}
    return memory(memory_id, subject=DESK, scope="org", type="semantic_fact", content=content)


def _task(handle, task_id: str, op: str = "get") -> dict:
    body = {"request_id": f"poll-{op}", "task_id": task_id}
    if op == "cancel":
        body["reason"] = "no longer needed"
    return handle.client.post(f"/mgp/tasks/{op}", body, format="json").json()["data"]["task"]


def test_a_reviewed_write_is_a_task_until_a_pm_approves_over_rest(runtime):
    response = call(runtime, "write", {"memory": _fact("mem_factor")}, "write", subject=DESK)
    assert response.status_code == 202
    task = response.json()["data"]["task"]
    assert task["status"] == "pending" and "shared_fact_requires_review" in task["message"]
    assert call(runtime, "get", {"memory_id": "mem_factor"}, "read").status_code == 404

    proposal = Proposal.objects.get(status=Proposal.Status.PENDING_REVIEW)
    pm = APIClient()
    pm.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_user_token(user=make_person('pm', runtime.tenant))[1]}")
    decision = {
        "decision": "approve",
        "reason": "IC table checked",
        "represented_owner": "",
        "action_digest": proposal.action_digest,
    }
    assert pm.post(f"/api/v1/proposals/{proposal.pk}/decisions/", decision, format="json").status_code == 201
    apply_released(proposal)

    done = _task(runtime, task["task_id"])
    assert done["status"] == "completed"
    assert done["result"]["memory"]["memory_id"] == "mem_factor"
    assert call(runtime, "get", {"memory_id": "mem_factor"}, "read", subject=DESK).status_code == 200


def test_cancelling_a_task_withdraws_its_proposal_and_frees_the_id(runtime, intruder):
    task = call(runtime, "write", {"memory": _fact("mem_maybe")}, "write", subject=DESK).json()["data"][
        "task"
    ]
    assert (
        intruder.client.post(
            "/mgp/tasks/cancel", {"request_id": "x", "task_id": task["task_id"]}, format="json"
        ).json()["error"]["code"]
        == "MGP_TASK_NOT_FOUND"
    )
    assert _task(runtime, task["task_id"], "cancel")["status"] == "cancelled"
    assert Proposal.objects.get().status == Proposal.Status.WITHDRAWN
    assert _task(runtime, task["task_id"])["status"] == "cancelled"
    again = call(runtime, "write", {"memory": _fact("mem_maybe")}, "write", subject=DESK)
    assert again.status_code == 202


def test_a_denied_write_names_the_rule(runtime):
    hint = {"strategy": "create", "dedupe_key": "alice:theme"}
    first = call(runtime, "write", {"memory": memory(), "merge_hint": hint}, "write")
    apply_released(Proposal.objects.get())
    assert first.status_code == 202
    other = memory(content={"statement": "Alice prefers light mode.", "theme": "light"})
    refused = call(runtime, "write", {"memory": other, "merge_hint": hint}, "write")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "MGP_CONFLICT_UNRESOLVED"
    stranger = {"kind": "user", "id": "alice"}
    restricted = memory(scope="org", sensitivity="restricted", subject=stranger)
    denied = call(runtime, "write", {"memory": restricted}, "write", risk_level="high")
    assert denied.status_code == 202  # restricted outside the owner's user scope: two people, not a denial


def test_batch_answers_per_item_and_keeps_the_envelope_ok(runtime, intruder):
    items = [{"memory": memory("mem_b1")}, {"memory": memory("mem_b1")}]
    response = call(runtime, "write/batch", {"items": items}, "write")
    assert response.status_code == 200
    results = response.json()["data"]["results"]
    assert [item["status"] for item in results] == ["ok", "error"]
    assert results[1]["error"]["code"] == "MGP_CONFLICT_UNRESOLVED"


def test_a_batch_costs_one_request_per_item_and_a_refused_one_writes_nothing(runtime, settings):
    settings.CUSTODIAN_API_RATE = "2/day"
    items = [{"memory": memory()} for _ in range(3)]
    refused = call(runtime, "write/batch", {"items": items}, "write")
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "MGP_BACKEND_ERROR"
    assert "Retry-After" in refused and not Proposal.objects.exists()
    assert call(runtime, "write/batch", {"items": items[:1]}, "write").status_code == 200
    assert call(runtime, "write", {"memory": memory()}, "write").status_code == 429
