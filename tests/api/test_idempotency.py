"""Idempotency-Key: a replay returns the original proposal; a different body conflicts."""

from proposals.models import Proposal
from tests.factories import (
    apply_released,
    approve,
    create_payload,
    make_evidence,
    make_person,
    user_preference,
)


def _post(client, payload, key):
    return client.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_same_key_and_body_replays_the_original(agent, api):
    payload = create_payload(user_preference(), [make_evidence(agent.agent)])
    first = _post(api, payload, "retry-me")
    second = _post(api, payload, "retry-me")
    assert first.status_code == second.status_code == 201
    assert second.json()["id"] == first.json()["id"]
    assert second["Idempotent-Replayed"] == "true"
    assert Proposal.objects.count() == 1


def test_same_key_with_another_body_conflicts(agent, api):
    payload = create_payload(user_preference(), [make_evidence(agent.agent)])
    first = _post(api, payload, "once")
    payload["rationale"] = "something else"
    second = _post(api, payload, "once")
    assert second.status_code == 409
    assert second.json()["code"] == "idempotency_conflict"
    assert second.json()["proposal_id"] == first.json()["id"]
    assert Proposal.objects.count() == 1


def test_keys_are_per_agent(agent, other_agent, api):
    payload = create_payload(user_preference(), [])
    assert _post(api, payload, "shared-key").status_code == 201
    assert _post(other_agent.client, payload, "shared-key").status_code == 201
    assert Proposal.objects.count() == 2


def test_missing_key_is_refused(agent, api):
    response = api.post("/api/v1/proposals/", create_payload(user_preference(), []), format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "idempotency_key_required"
    assert Proposal.objects.count() == 0


def test_update_against_a_stale_base_revision_is_refused_and_not_stored(agent, api, applied_memory):
    payload = {
        "action": "update",
        "memory_id": str(applied_memory.id),
        "base_revision": applied_memory.revision + 1,
        "changes": {"confidence": 0.2},
    }
    before = Proposal.objects.count()
    response = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="stale")
    assert response.status_code == 409
    assert response.json()["code"] == "base_revision_stale"
    assert response.json()["current_revision"] == applied_memory.revision
    assert Proposal.objects.count() == before


def test_a_replay_returns_the_original_even_when_a_fresh_submission_would_be_refused(
    agent, api, applied_memory
):
    payload = {
        "action": "update",
        "memory_id": str(applied_memory.pk),
        "base_revision": applied_memory.revision,
        "changes": {"confidence": 0.2},
    }
    first = _post(api, payload, "update-once")
    assert first.status_code == 201, first.content
    proposal = Proposal.objects.get(pk=first.json()["id"])
    for person in [make_person("rev-a", agent.tenant), make_person("rev-b", agent.tenant)][
        : proposal.required_approvals
    ]:
        approve(person, proposal)
    assert apply_released(proposal).outcome == "applied"  # the memory moved on: this base is stale now
    fresh = _post(api, payload, "another-key")
    assert (fresh.status_code, fresh.json()["code"]) == (409, "base_revision_stale")
    replay = _post(api, payload, "update-once")
    assert (replay.status_code, replay.json()["id"], replay["Idempotent-Replayed"]) == (
        201,
        first.json()["id"],
        "true",
    )
    conflict = _post(api, {**payload, "changes": {"confidence": 0.3}}, "update-once")
    assert conflict.json()["code"] == "idempotency_conflict"
