"""The other REST surfaces that could carry memory content stay shut to another caller.

Receipts, the audit trail of reads, the reviewer queue and list cursors: what one agent
asked or wrote is not handed to another agent of the tenant, nor to another tenant.
"""

import json
import uuid

import pytest

from reviews.selectors import AUDIT
from tenancy.services import revoke_delegations
from tests.factories import (
    apply_released,
    approve,
    create_payload,
    make_agent,
    make_evidence,
    make_person,
    owner_context,
    submit,
    user_preference,
)
from tests.reviews.test_review_api import person_client


@pytest.fixture
def peer(agent):
    return make_agent(agent.tenant.name, "peer-agent", acts_for=())


def _confidential(agent, marker):
    memory = user_preference(
        content={"statement": f"{marker} on leave", "preference_key": f"{marker}-k", "preference_value": "v"},
        sensitivity="confidential",
        dedupe_key=f"{marker}-dedupe",
    )
    proposal = submit(agent.agent, create_payload(memory, [make_evidence(agent.agent)]))
    for n in range(proposal.required_approvals):
        approve(make_person(f"approver-{uuid.uuid4().hex[:6]}-{n}", agent.tenant), proposal)
    assert apply_released(proposal).outcome == "applied"
    return proposal


def test_another_agent_does_not_read_an_agents_search_text(agent, peer, marker):
    body = {"query": f"{marker} medical leave", "filters": {"subject": {"kind": "user", "id": "pm-alice"}}}
    assert agent.client.post("/api/v1/recall/search", body, format="json").status_code == 200
    theirs = peer.client.get("/api/v1/audit/events/", {"action": "search"})
    assert theirs.status_code == 200
    (event,) = theirs.json()["results"]
    assert marker not in theirs.content.decode()
    assert (event["query"], event["filters"], event["actor"]) == ("***", {}, agent.agent.name)
    (own,) = agent.client.get("/api/v1/audit/events/", {"action": "search"}).json()["results"]
    assert own["query"].startswith(marker) and own["filters"]["subject"]["kind"] == "user"


def test_auditors_still_read_every_search_text_of_their_tenant(agent, marker):
    agent.client.post("/api/v1/recall/search", {"query": marker}, format="json")
    auditor = make_person("auditor", agent.tenant, AUDIT)
    (event,) = person_client(auditor).get("/api/v1/audit/events/", {"action": "search"}).json()["results"]
    assert event["query"] == marker


def test_receipts_carry_no_content_of_a_confidential_memory(agent, peer, marker):
    proposal = _confidential(agent, marker)
    delete = submit(
        agent.agent,
        {
            "action": "delete",
            "memory_id": str(proposal.target_id),
            "base_revision": 1,
            "reason": f"{marker} forget it",
            "policy_context": owner_context(),
        },
    )
    for n in range(delete.required_approvals):
        approve(make_person(f"deleter-{n}", agent.tenant), delete)
    receipt = apply_released(delete)
    listed = peer.client.get("/api/v1/receipts/")
    detail = peer.client.get(f"/api/v1/receipts/{receipt.pk}/")
    assert listed.status_code == detail.status_code == 200
    assert len(listed.json()["results"]) == 2
    assert marker not in listed.content.decode() + detail.content.decode()


def test_a_reviewer_of_another_tenant_sees_nothing_of_the_queue(agent, other_agent, marker):
    memory = user_preference(content={"statement": f"{marker} restricted"}, sensitivity="restricted")
    proposal = submit(agent.agent, create_payload(memory, [make_evidence(agent.agent)]))
    assert proposal.status == "pending_review"
    outsider = person_client(make_person("outsider", other_agent.tenant))
    response = outsider.get("/api/v1/reviews/queue/")
    assert response.status_code == 200 and response.json()["results"] == []
    decided = outsider.post(
        f"/api/v1/proposals/{proposal.pk}/decisions/",
        {"decision": "approve", "reason": "x", "action_digest": proposal.action_digest},
        format="json",
    )
    assert decided.status_code == 404
    assert marker not in response.content.decode() + decided.content.decode()


def test_a_reviewer_of_the_tenant_reads_the_proposal_to_decide_raw(agent, marker):
    memory = user_preference(content={"statement": f"{marker} restricted"}, sensitivity="restricted")
    submit(agent.agent, create_payload(memory, [make_evidence(agent.agent)]))
    reviewer = person_client(make_person("reviewer", agent.tenant))
    (row,) = reviewer.get("/api/v1/reviews/queue/").json()["results"]
    assert (row["view"], row["view_rule"]) == ("raw", "review-decider")
    assert row["fields"]["content"]["statement"].startswith(marker)


def test_a_cursor_carries_no_authority_to_another_tenant(agent, other_agent, marker):
    for n in range(3):
        _confidential(agent, f"{marker}{n}")
    first = agent.client.get("/api/v1/proposals/", {"limit": 1}).json()
    cursor = first["next"].split("cursor=")[1].split("&")[0]
    for url in ("/api/v1/proposals/", "/api/v1/receipts/", "/api/v1/dreaming/runs/"):
        response = other_agent.client.get(url, {"cursor": cursor, "limit": 1})
        assert response.status_code in (200, 400), response.content
        assert marker not in json.dumps(response.json())
        if response.status_code == 200:
            assert response.json()["results"] == []


def test_receipts_name_a_confidential_memorys_evidence_only_to_a_raw_reader(agent, peer, marker):
    """The evidence a receipt cites is shown only to a caller who gets the memory raw (as recall shows it)."""
    evidence = make_evidence(agent.agent, {"turn": f"{marker} Alice: I am on leave"}, kind="chat_turn")
    memory = user_preference(content={"statement": "on leave"}, sensitivity="confidential")
    proposal = submit(agent.agent, create_payload(memory, [evidence]))
    for n in range(proposal.required_approvals):
        approve(make_person(f"approver-{n}", agent.tenant), proposal)
    assert apply_released(proposal).outcome == "applied"
    (row,) = peer.client.get("/api/v1/receipts/").json()["results"]
    assert str(evidence.source_id) not in json.dumps(row)
    assert row["view"] == "masked" and row["evidence"] == []
    (owner,) = agent.client.get("/api/v1/receipts/", {"acting_for": "user:pm-alice"}).json()["results"]
    assert owner["view"] == "raw" and owner["evidence"][0]["evidence_id"] == str(evidence.source_id)


def test_a_recall_cursor_is_no_one_elses_and_carries_no_grant(agent, peer, marker):
    _confidential(agent, marker)
    body = {"query": "leave", "limit": 1, "policy_context": owner_context()}
    first = agent.client.post("/api/v1/recall/search", body, format="json").json()
    taken = {**body, "cursor": first["recall_id"]}
    taken.pop("policy_context")
    response = peer.client.post("/api/v1/recall/search", taken, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "invalid_cursor")
    revoke_delegations(agent=agent.agent, subject={"kind": "user", "id": "pm-alice"})
    again = agent.client.post("/api/v1/recall/search", {**body, "cursor": first["recall_id"]}, format="json")
    assert (again.status_code, again.json()["code"]) == (403, "acting_for_not_granted")
