"""Evidence bindings must name an exact, current revision of the caller's own evidence."""

from proposals.models import Proposal
from provenance.services import add_evidence_revision, invalidate_evidence_revision
from tests.factories import create_payload, make_evidence, user_preference


def _post(client, payload, key="k1"):
    return client.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY=key)


def _binding_payload(binding):
    payload = create_payload(user_preference(), [])
    payload["evidence"] = [binding]
    return payload


def test_wrong_hash_is_refused_as_mismatch(agent, api):
    binding = make_evidence(agent.agent).binding() | {"content_hash": "0" * 64}
    response = _post(api, _binding_payload(binding))
    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "evidence_mismatch"


def test_wrong_revision_number_is_refused_as_mismatch(agent, api):
    binding = make_evidence(agent.agent).binding() | {"revision": 7}
    response = _post(api, _binding_payload(binding))
    assert response.status_code == 422
    assert response.json()["code"] == "evidence_mismatch"


def test_superseded_revision_is_refused_as_invalid(agent, api):
    revision = make_evidence(agent.agent)
    add_evidence_revision(source=revision.source, agent=agent.agent, content={"fixed": True})
    response = _post(api, _binding_payload(revision.binding()))
    assert response.status_code == 422
    assert response.json()["code"] == "evidence_invalid"


def test_invalidated_revision_is_refused_as_invalid(agent, api):
    revision = make_evidence(agent.agent)
    invalidate_evidence_revision(revision=revision, reason="look-ahead bias in the backtest")
    response = _post(api, _binding_payload(revision.binding()))
    assert response.status_code == 422
    assert response.json()["code"] == "evidence_invalid"


def test_other_tenants_evidence_is_refused_like_unknown_evidence(agent, other_agent, api):
    foreign = make_evidence(other_agent.agent)
    response = _post(api, _binding_payload(foreign.binding()))
    body = response.json()
    assert response.status_code == 422
    assert body["code"] == "evidence_mismatch"
    assert foreign.content_hash not in response.content.decode()


def test_denied_proposal_is_kept_for_audit_and_never_released(agent, api):
    binding = make_evidence(agent.agent).binding() | {"content_hash": "1" * 64}
    body = _post(api, _binding_payload(binding)).json()
    proposal = Proposal.objects.get(pk=body["proposal_id"])
    assert proposal.status == Proposal.Status.DENIED
    assert not proposal.outbox_entries.exists()
    assert body["reason_codes"] == ["evidence_mismatch"]
    assert body["policy_fingerprint"] == proposal.policy_fingerprint


def test_a_denial_names_the_evidence_revision_at_fault(agent, api):
    good = make_evidence(agent.agent)
    stale = make_evidence(agent.agent)
    add_evidence_revision(source=stale.source, agent=agent.agent, content={"rerun": True})
    wrong = make_evidence(agent.agent).binding() | {"content_hash": "0" * 64}
    payload = create_payload(user_preference(), [good, stale])
    payload["evidence"].append(wrong)
    body = _post(api, payload).json()
    assert body["code"] == "evidence_mismatch"
    assert sorted(
        (item["evidence_id"], item["revision"], item["status"]) for item in body["evidence"]
    ) == sorted([(str(stale.source_id), 1, "superseded"), (wrong["evidence_id"], 1, "mismatch")])
