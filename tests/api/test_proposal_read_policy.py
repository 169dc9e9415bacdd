"""A proposal's frozen fields are shown in the view the read policy gives the caller for its memory.

The strictest of the proposed memory and the target memory as it is now wins; the caller's
``acting_for`` and ``data_zone`` are taken as ``GET /memories/{id}/`` takes them.
"""

import json
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_core.models import Memory
from proposals.models import Proposal
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

ALICE = {"kind": "user", "id": "pm-alice"}


@pytest.fixture
def peer(agent):
    """Another agent of the same tenant, acting for nobody."""
    return make_agent(agent.tenant.name, "peer-agent", acts_for=())


def _secret(marker: str, sensitivity: str) -> dict:
    return user_preference(
        content={
            "statement": f"{marker} Alice is on medical leave",
            "preference_key": f"{marker}-key",
            "preference_value": f"{marker}-value",
        },
        dedupe_key=f"{marker}-dedupe",
        sensitivity=sensitivity,
    )


def _proposal(agent, marker, sensitivity="confidential") -> Proposal:
    payload = create_payload(_secret(marker, sensitivity), [make_evidence(agent.agent)])
    payload["rationale"] = f"{marker} said in a private chat"
    payload["policy_context"] = owner_context(chat_id=f"{marker}-chat")
    return submit(agent.agent, payload)


def _applied(agent, marker, sensitivity="confidential") -> Proposal:
    proposal = _proposal(agent, marker, sensitivity)
    for n in range(proposal.required_approvals):
        approve(make_person(f"approver-{uuid.uuid4().hex[:6]}-{n}", agent.tenant), proposal)
    assert apply_released(proposal).outcome == "applied"
    return Proposal.objects.get(pk=proposal.pk)


def _detail(client, proposal, **params):
    return client.get(f"/api/v1/proposals/{proposal.pk}/", params)


def test_another_agent_sees_a_confidential_proposal_masked(agent, peer, marker):
    proposal = _applied(agent, marker)
    response = _detail(peer.client, proposal)
    assert response.status_code == 200
    assert marker not in response.content.decode()
    body = response.json()
    assert (body["view"], body["view_rule"]) == ("masked", "read-confidential")
    assert body["fields"]["content"]["statement"] == "***"
    assert (body["fields"]["sensitivity"], body["action_digest"]) == ("confidential", proposal.action_digest)
    memory = peer.client.get(f"/api/v1/memories/{proposal.target_id}/").json()
    assert memory["return_mode"] == body["view"]


def test_another_agent_sees_a_restricted_proposal_as_metadata_only(agent, peer, marker):
    proposal = _proposal(agent, marker, "restricted")
    body = _detail(peer.client, proposal).json()
    assert marker not in json.dumps(body)
    assert (body["view"], body["view_rule"]) == ("metadata_only", "read-restricted")
    assert "content" not in body["fields"] and body["fields"]["type"] == "preference"


def test_the_list_shows_every_proposal_in_the_callers_view(agent, peer, marker):
    _applied(agent, marker)
    _proposal(agent, f"{marker}r", "restricted")
    response = peer.client.get("/api/v1/proposals/")
    assert response.status_code == 200
    assert marker not in response.content.decode()
    assert {row["view"] for row in response.json()["results"]} == {"masked", "metadata_only"}


def test_acting_for_the_subject_reads_the_proposal_raw(agent, marker):
    proposal = _applied(agent, marker)
    body = _detail(agent.client, proposal, acting_for="user:pm-alice").json()
    assert body["view"] == "raw"
    assert body["fields"]["content"]["statement"].startswith(marker)
    assert body["rationale"].startswith(marker)


def test_the_submitter_gets_no_exception_without_acting_for(agent, marker):
    proposal = _applied(agent, marker)
    response = _detail(agent.client, proposal)
    assert marker not in response.content.decode()
    assert response.json()["view"] == "masked"


def test_a_revoked_grant_bites_on_later_reads(agent, marker):
    proposal = _applied(agent, marker)
    revoke_delegations(agent=agent.agent, subject=ALICE)
    refused = _detail(agent.client, proposal, acting_for="user:pm-alice")
    assert (refused.status_code, refused.json()["code"]) == (403, "acting_for_not_granted")
    listed = agent.client.get("/api/v1/proposals/", {"acting_for": "user:pm-alice"})
    assert (listed.status_code, listed.json()["code"]) == (403, "acting_for_not_granted")
    assert marker not in agent.client.get("/api/v1/proposals/").content.decode()


def test_a_lying_acting_for_is_refused(agent, peer, marker):
    proposal = _applied(agent, marker)
    for response in (
        _detail(peer.client, proposal, acting_for="user:pm-alice"),
        peer.client.get("/api/v1/proposals/", {"acting_for": "user:pm-alice"}),
    ):
        assert (response.status_code, response.json()["code"]) == (403, "acting_for_not_granted")
        assert marker not in response.content.decode()


def test_an_external_data_zone_gets_no_content_of_a_confidential_proposal(agent, marker):
    proposal = _applied(agent, marker)
    body = _detail(agent.client, proposal, acting_for="user:pm-alice", data_zone="external").json()
    assert marker not in json.dumps(body)
    assert (body["view"], body["view_rule"]) == ("metadata_only", "read-restricted-external")


def test_an_external_data_zone_gets_an_internal_proposal_summarised(agent, peer, marker):
    proposal = _proposal(agent, marker, "internal")
    body = _detail(peer.client, proposal, data_zone="external").json()
    assert marker not in json.dumps(body)
    assert (body["view"], body["view_rule"]) == ("summary", "read-external-summary")
    assert body["fields"]["dedupe_key"] == "***"
    assert "summary withheld" in body["fields"]["content"]["statement"]


def test_an_internal_proposal_is_raw_to_every_agent_of_the_tenant(agent, peer, marker):
    proposal = _proposal(agent, marker, "internal")
    body = _detail(peer.client, proposal).json()
    assert body["view"] == "raw" and body["fields"]["content"]["statement"].startswith(marker)


def test_an_update_of_a_confidential_memory_is_masked_though_it_names_no_sensitivity(agent, peer, marker):
    created = _applied(agent, marker)
    update = submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(created.target_id),
            "base_revision": 1,
            "changes": {"content": {"statement": f"{marker} back from leave"}, "dedupe_key": f"{marker}-2"},
            "evidence": [make_evidence(agent.agent).binding()],
            "policy_context": owner_context(),
            "rationale": f"{marker} she told me",
        },
    )
    body = _detail(peer.client, update).json()
    assert marker not in json.dumps(body)
    assert body["view"] == "masked" and body["fields"]["content"] == {"statement": "***"}


def test_an_old_proposal_follows_the_memory_as_it_is_now(agent, peer, marker):
    """A proposal made when the memory was internal is withheld once the memory is restricted."""
    created = _applied(agent, marker, "internal")
    update = submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(created.target_id),
            "base_revision": 1,
            "changes": {"sensitivity": "restricted"},
            "evidence": [make_evidence(agent.agent).binding()],
            "policy_context": owner_context(),
        },
    )
    for n in range(update.required_approvals):
        approve(make_person(f"restrict-{n}", agent.tenant), update)
    assert apply_released(update).outcome == "applied"
    body = _detail(peer.client, created).json()
    assert marker not in json.dumps(body)
    assert body["view"] == "metadata_only"


def test_a_lifecycle_reason_is_hidden_with_the_memory(agent, peer, marker):
    created = _applied(agent, marker)
    delete = submit(
        agent.agent,
        {
            "action": "delete",
            "memory_id": str(created.target_id),
            "base_revision": 1,
            "reason": f"{marker} she asked to forget it",
            "policy_context": owner_context(),
        },
    )
    body = _detail(peer.client, delete).json()
    assert marker not in json.dumps(body)
    assert body["fields"] == {"reason": "***"} and body["view"] == "masked"


def test_the_submit_answer_is_raw_when_acting_for_the_subject(agent, marker):
    payload = create_payload(_secret(marker, "confidential"), [make_evidence(agent.agent)])
    response = agent.client.post(
        "/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["view"] == "raw" and body["fields"]["content"]["statement"].startswith(marker)


def test_a_replayed_submit_is_masked_once_the_grant_is_revoked(agent, marker):
    payload = create_payload(_secret(marker, "confidential"), [make_evidence(agent.agent)])
    post = {"path": "/api/v1/proposals/", "data": payload, "format": "json", "HTTP_IDEMPOTENCY_KEY": "same"}
    assert agent.client.post(**post).status_code == 201
    revoke_delegations(agent=agent.agent, subject=ALICE)
    replayed = agent.client.post(**post)
    assert replayed.status_code == 201 and replayed["Idempotent-Replayed"] == "true"
    assert marker not in replayed.content.decode() and replayed.json()["view"] == "masked"


def test_a_batch_answer_shows_each_item_in_its_own_view(agent, marker):
    evidence = [make_evidence(agent.agent)]
    items = [
        {"idempotency_key": "owner", "proposal": create_payload(_secret(marker, "confidential"), evidence)},
        {
            "idempotency_key": "blind",
            "proposal": create_payload(
                _secret(f"{marker}b", "confidential"), evidence, {"risk_level": "low"}
            ),
        },
    ]
    response = agent.client.post("/api/v1/proposals/batch", {"items": items}, format="json")
    assert response.status_code == 200, response.content
    owner, blind = response.json()["results"]
    assert owner["proposal"]["view"] == "raw"
    assert f"{marker}b" not in json.dumps(blind) and blind["proposal"]["view"] == "masked"


def test_withdrawing_answers_in_the_callers_view(agent, marker):
    proposal = _proposal(agent, marker)
    assert proposal.status == "pending_review"
    response = agent.client.post(f"/api/v1/proposals/{proposal.pk}/withdraw/")
    assert response.status_code == 200
    assert marker not in response.content.decode() and response.json()["status"] == "withdrawn"


def test_the_list_reads_target_memories_once_per_page(agent, peer, marker):
    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            response = peer.client.get("/api/v1/proposals/", {"data_zone": "internal"})
            assert response.status_code == 200
        return len(queries)

    _applied(agent, marker)
    few = count()
    for n in range(6):
        created = _applied(agent, f"{marker}{n}")
        submit(
            agent.agent,
            {
                "action": "expire",
                "memory_id": str(created.target_id),
                "base_revision": 1,
                "reason": "done",
                "policy_context": owner_context(),
            },
        )
    assert count() == few
    assert Memory.objects.count() == 7


def test_an_observation_answers_its_candidates_in_their_proposals_view(agent, marker):
    evidence = [make_evidence(agent.agent, {"turn": "chat-1"}, kind="chat_turn").binding()]
    candidate = _secret(marker, "confidential")
    body = {
        "kind": "utterance",
        "text": "Nothing to note.",
        "subject": ALICE,
        "scope": "user",
        "evidence": evidence,
        "policy_context": {"risk_level": "low"},
        "candidates": [{key: value for key, value in candidate.items() if key != "dedupe_key"}],
    }
    response = agent.client.post("/api/v1/observations/", body, format="json")
    assert response.status_code == 200, response.content
    (shown,) = response.json()["candidates"]
    assert shown["proposal_id"] and shown["view"] == "masked"
    assert marker not in json.dumps(shown)
    body["policy_context"] = owner_context()
    (owner,) = agent.client.post("/api/v1/observations/", body, format="json").json()["candidates"]
    assert owner["view"] == "raw" and owner["content"]["statement"].startswith(marker)


def test_an_entity_proposal_is_a_tenant_record_shown_raw(agent, peer):
    """Canonical entities are the tenant's shared vocabulary (recall names them as link ends)."""
    payload = {"action": "entity_create", "entity": {"kind": "factor", "name": "momentum_12_1"}}
    response = agent.client.post(
        "/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex
    )
    assert response.status_code == 201, response.content
    body = _detail(peer.client, Proposal.objects.get(pk=response.json()["id"])).json()
    assert (body["view"], body["view_rule"]) == ("raw", "read-tenant-record")
    assert body["fields"]["name"] == "momentum_12_1"


def test_a_replayed_batch_checks_its_grants_in_one_read(agent, marker):
    from tenancy.models import Delegation

    def grant_reads(n: int) -> int:
        evidence = [make_evidence(agent.agent)]
        items = [
            {
                "idempotency_key": f"{n}-{i}",
                "proposal": create_payload(_secret(f"{marker}{n}{i}", "internal"), evidence),
            }
            for i in range(n)
        ]
        assert (
            agent.client.post("/api/v1/proposals/batch", {"items": items}, format="json").status_code == 200
        )
        with CaptureQueriesContext(connection) as queries:
            replayed = agent.client.post("/api/v1/proposals/batch", {"items": items}, format="json")
        assert replayed.json()["replayed"] == n
        assert {row["proposal"]["view"] for row in replayed.json()["results"]} == {"raw"}
        return sum(Delegation._meta.db_table in q["sql"] for q in queries.captured_queries)

    assert grant_reads(2) == grant_reads(6) == 1


def test_a_compaction_shows_its_successor_in_the_view_of_its_members(agent, peer, remember, marker):
    members = [remember(f"{marker} note {n}", sensitivity="confidential") for n in range(2)]
    plan = {
        "action": "compact",
        "compaction": {
            "subject": ALICE,
            "scope": "user",
            "type": "preference",
            "members": [{"memory_id": str(m.id), "revision": m.revision} for m in members],
            "content": {"statement": f"{marker} summary"},
        },
        "reason": f"{marker} tidy",
    }
    proposal = submit(agent.agent, plan)  # an agent's compaction is denied, and stored for audit
    body = _detail(peer.client, proposal).json()
    assert marker not in json.dumps(body)
    assert body["view"] == "masked"
    assert body["fields"]["memory"]["content"] == {"statement": "***"}
    expected = [{"memory_id": str(m.id), "revision": 1} for m in members]
    by_id = lambda rows: sorted(rows, key=lambda row: row["memory_id"])  # noqa: E731
    assert by_id(body["fields"]["members"]) == by_id(expected)


def test_a_proposal_naming_another_tenants_memory_learns_nothing_of_it(agent, other_agent, remember, marker):
    """The view of a proposal about an id of another tenant is decided as if the target were missing."""
    foreign = remember(f"{marker} restricted", sensitivity="restricted")
    payload = {
        "action": "update",
        "memory_id": str(foreign.pk),
        "base_revision": 1,
        "changes": {"content": {"statement": "probe"}, "sensitivity": "internal"},
        "policy_context": {"risk_level": "low"},
    }
    probe = submit(other_agent.agent, payload)
    body = _detail(other_agent.client, probe).json()
    assert probe.policy_facts["target"] == "missing"
    assert (body["view"], body["fields"]["content"]) == ("raw", {"statement": "probe"})
