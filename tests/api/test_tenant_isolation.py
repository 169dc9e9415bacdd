"""Another tenant's ids answer 404 on every endpoint, exactly like ids that never existed."""

import uuid

import pytest

from executor.models import Receipt
from proposals.models import Proposal
from tests.factories import create_payload, make_evidence, submit, user_preference


@pytest.fixture
def foreign(other_agent, applied_memory_factory):
    """Objects of the other tenant: evidence, an applied memory, its proposal and receipt."""
    memory = applied_memory_factory(other_agent)
    receipt = Receipt.objects.get(memory_id=memory.id)
    return {
        "evidence": receipt.evidence[0]["evidence_id"],
        "memory": str(memory.id),
        "proposal": str(receipt.proposal_id),
        "receipt": str(receipt.id),
    }


READS = [
    "/api/v1/evidence/{evidence}/",
    "/api/v1/memories/{memory}/",
    "/api/v1/proposals/{proposal}/",
    "/api/v1/receipts/{receipt}/",
]


@pytest.mark.parametrize("template", READS)
def test_foreign_ids_are_not_found(api, foreign, template):
    foreign_response = api.get(template.format(**foreign))
    missing = api.get(template.format(**{k: uuid.uuid4() for k in foreign}))
    assert foreign_response.status_code == missing.status_code == 404
    assert foreign_response.json() == missing.json()


def test_foreign_ids_cannot_be_written_to(agent, api, foreign):
    revision_post = api.post(
        f"/api/v1/evidence/{foreign['evidence']}/revisions/", {"content": {}}, format="json"
    )
    withdraw = api.post(f"/api/v1/proposals/{foreign['proposal']}/withdraw/")
    assert revision_post.status_code == withdraw.status_code == 404
    assert Proposal.objects.get(pk=foreign["proposal"]).status == Proposal.Status.APPLIED


def test_update_of_foreign_memory_is_denied_without_revealing_it(agent, api, foreign):
    payload = {
        "action": "update",
        "memory_id": foreign["memory"],
        "base_revision": 1,
        "changes": {"confidence": 0.1},
        "evidence": [make_evidence(agent.agent).binding()],
    }
    response = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="x")
    assert response.status_code == 422
    assert response.json()["code"] == "target_not_found"


def test_lists_show_only_own_rows(agent, api, foreign):
    submit(agent.agent, create_payload(user_preference(), []))
    proposals = api.get("/api/v1/proposals/").json()["results"]
    receipts = api.get("/api/v1/receipts/").json()["results"]
    by_memory = api.get(f"/api/v1/receipts/?memory={foreign['memory']}").json()["results"]
    assert [p["id"] for p in proposals] != [] and foreign["proposal"] not in {p["id"] for p in proposals}
    assert receipts == [] and by_memory == []


def test_body_naming_another_tenant_is_refused(agent, api, other_agent):
    payload = create_payload(user_preference(), [])
    payload["policy_context"]["tenant_id"] = str(other_agent.tenant.id)
    response = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="t")
    assert response.status_code == 403
    assert response.json()["code"] == "tenant_mismatch"
    assert Proposal.objects.count() == 0


def test_body_naming_another_agent_is_refused(agent, api):
    payload = create_payload(user_preference(), [])
    payload["policy_context"]["actor_agent"] = "someone-else"
    response = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="t")
    assert response.status_code == 403
    assert response.json()["code"] == "tenant_mismatch"


def test_unknown_api_path_is_a_problem_not_an_html_page(api):
    response = api.get("/api/v1/nothing-here/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "not_found"
