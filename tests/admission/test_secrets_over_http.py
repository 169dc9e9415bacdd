"""A secret an agent submits is denied before anything holds it, however it is hidden.

Every test posts as a client would (REST, the batch, observations, MGP) and then reads
every column of every table (``tests.database_scan``) for the secret, plus what was logged
and what was answered: the proposal is stored for audit with its findings, never the secret.
"""

import base64
import binascii
import json
import logging

import pytest

from evidence.models import EvidenceRevision
from proposals.models import Proposal
from tests.database_scan import tables_holding
from tests.factories import create_payload, make_evidence, owner_context, user_preference
from tests.mgp.conftest import PROFILE, call, memory

URL = "/api/v1/proposals/"


def _post(api, body, key="k1"):
    return api.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def _preference(agent, content_extra=None, **payload_extra):
    content = {
        "statement": "Alice prefers weekly summaries",
        "preference_key": "summary_cadence",
        "preference_value": "weekly",
    }
    memory = user_preference(content={**content, **(content_extra or {})})
    return {**create_payload(memory, [make_evidence(agent.agent)], owner_context()), **payload_extra}


def _assert_stored_nowhere(*texts, answered="", logged=""):
    for text in texts:
        assert tables_holding(text) == [], text
        assert text not in answered
        assert text not in logged


def _assert_denied_for_secret(response, field):
    assert response.status_code == 422, response.content
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == "secret_detected"
    assert {"detector": "credentials", "field": field} in [
        {"detector": f["detector"], "field": f["field"]} for f in problem["findings"]
    ]
    proposal = Proposal.objects.get(pk=problem["proposal_id"])
    assert (proposal.status, proposal.matched_rule) == ("denied", "deny-secret")
    assert proposal.policy_facts["contains_secret"] is True
    assert proposal.admission_findings == problem["findings"]
    return proposal


@pytest.fixture
def logged(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog


def test_a_secret_nested_deep_in_content_is_denied_and_stored_nowhere(agent, api, key, logged):
    deep = {"a": {"b": [{"c": {"d": [f"the key is {key}"]}}]}}
    response = _post(api, _preference(agent, {"preference_value": deep}))
    _assert_denied_for_secret(response, "memory.content.preference_value.a.b[0].c.d[0]")
    _assert_stored_nowhere(key, answered=response.content.decode(), logged=logged.text)


@pytest.mark.parametrize(
    "encode",
    [
        lambda s: base64.b64encode(f"aws_access_key_id={s}".encode()).decode(),
        lambda s: base64.urlsafe_b64encode(s.encode()).decode().rstrip("="),
        lambda s: binascii.hexlify(s.encode()).decode(),
        lambda s: base64.b64encode(binascii.hexlify(s.encode())).decode(),
    ],
    ids=["base64", "base64url-unpadded", "hex", "hex-in-base64"],
)
def test_an_encoded_secret_is_denied_and_stored_nowhere(agent, api, key, logged, encode):
    encoded = encode(key)
    response = _post(api, _preference(agent, {"preference_value": encoded}))
    _assert_denied_for_secret(response, "memory.content.preference_value")
    _assert_stored_nowhere(key, encoded, answered=response.content.decode(), logged=logged.text)


def test_a_secret_split_across_two_fields_is_denied_and_stored_nowhere(agent, api, key, logged):
    head, tail = key[:10], key[10:]
    response = _post(api, _preference(agent, {"preference": head, "summary": tail}))
    _assert_denied_for_secret(response, "memory.content.preference + memory.content.summary")
    _assert_stored_nowhere(head, tail, answered=response.content.decode(), logged=logged.text)


def test_a_secret_in_the_rationale_is_denied_and_stored_nowhere(agent, api, key, logged):
    response = _post(api, _preference(agent, rationale=f"pulled with token {key} from the vault"))
    proposal = _assert_denied_for_secret(response, "rationale")
    assert proposal.rationale == "[withheld: secret detected]"
    _assert_stored_nowhere(key, answered=response.content.decode(), logged=logged.text)


def test_a_secret_as_a_json_key_is_denied_and_its_path_withheld(agent, api, key, logged):
    response = _post(api, _preference(agent, {"preference_value": {key: "prod"}}))
    assert response.status_code == 422
    assert response.json()["code"] == "secret_detected"
    _assert_stored_nowhere(key, answered=response.content.decode(), logged=logged.text)


def test_a_malformed_proposal_holding_a_secret_is_refused_whole_without_quoting_it(agent, api, key):
    """The registered schema would refuse the content, and its messages could quote the value."""
    response = _post(api, _preference(agent, {"preference": 7, "summary": {"x": key}, key: "y"}))
    assert response.status_code == 422
    problem = response.json()
    assert problem["code"] == "secret_detected" and "proposal_id" not in problem
    assert not Proposal.objects.exists()
    _assert_stored_nowhere(key, answered=response.content.decode())


def test_a_denied_secret_keeps_the_action_shape_for_audit(agent, api, key):
    response = _post(api, _preference(agent, {"preference_value": key}))
    proposal = Proposal.objects.get(pk=response.json()["proposal_id"])
    fields = proposal.fields
    assert fields["subject"] == {"kind": "user", "id": "pm-alice"}
    assert fields["type"] == "preference"
    assert set(fields["content"]) == {"statement", "preference_key", "preference_value"}
    assert set(fields["content"].values()) == {"[withheld: secret detected]"}
    assert proposal.history.count() == 1
    assert not proposal.outbox_entries.exists()


def test_a_replay_of_a_denied_secret_answers_the_same_denial(agent, api, key):
    body = _preference(agent, {"preference_value": key})
    first, again = _post(api, body, "same"), _post(api, body, "same")
    assert again.status_code == 422 and again["Idempotent-Replayed"] == "true"
    assert again.json()["proposal_id"] == first.json()["proposal_id"]
    assert Proposal.objects.count() == 1


def test_a_batch_item_with_a_secret_is_denied_in_its_place(agent, api, key, logged):
    items = [
        {"idempotency_key": "a", "proposal": _preference(agent)},
        {"idempotency_key": "b", "proposal": _preference(agent, {"preference_value": key})},
    ]
    response = api.post("/api/v1/proposals/batch", {"items": items}, format="json")
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [result["status"] for result in results] == [201, 422]
    assert results[1]["problem"]["code"] == "secret_detected"
    _assert_stored_nowhere(key, answered=response.content.decode(), logged=logged.text)


def test_evidence_content_with_a_secret_is_refused_at_registration(agent, api, key, logged):
    body = {"kind": "tool_result", "external_ref": "vault/read/1", "content": {"out": {"k": f"id={key}"}}}
    response = api.post("/api/v1/evidence/", body, format="json")
    assert response.status_code == 422
    problem = response.json()
    assert problem["code"] == "secret_detected"
    assert [f["field"] for f in problem["findings"]] == ["content.out.k"]
    assert not EvidenceRevision.objects.exists()
    _assert_stored_nowhere(key, answered=response.content.decode(), logged=logged.text)


def test_a_new_evidence_revision_with_a_secret_is_refused(agent, api, key):
    revision = make_evidence(agent.agent)
    url = f"/api/v1/evidence/{revision.source_id}/revisions/"
    response = api.post(url, {"content": {"rerun": base64.b64encode(key.encode()).decode()}}, format="json")
    assert response.status_code == 422
    assert response.json()["code"] == "secret_detected"
    assert EvidenceRevision.objects.filter(source_id=revision.source_id).count() == 1
    _assert_stored_nowhere(key, answered=response.content.decode())


def test_a_secret_in_observation_text_denies_its_candidates(agent, api, key, logged):
    body = {
        "kind": "utterance",
        "text": f"I prefer weekly summaries. My AWS key is {key}.",
        "subject": {"kind": "user", "id": "pm-alice"},
        "scope": "user",
        "evidence": [make_evidence(agent.agent, {"turn": "chat-1"}).binding()],
        "policy_context": owner_context(),
    }
    response = api.post("/api/v1/observations/", body, format="json")
    assert response.status_code == 200, response.content
    [candidate] = response.json()["candidates"]
    assert (candidate["status"], candidate["reason_codes"]) == ("denied", ["secret_detected"])
    _assert_stored_nowhere(key, answered=response.content.decode(), logged=logged.text)


def test_a_secret_in_an_observed_field_is_denied_and_not_answered_back(agent, api, key):
    statement = f"deploy key {key}"
    body = {
        "kind": "utterance",
        "text": "Noted.",
        "subject": {"kind": "user", "id": "pm-alice"},
        "scope": "user",
        "evidence": [make_evidence(agent.agent, {"turn": "chat-2"}).binding()],
        "policy_context": owner_context(),
        "candidates": [
            {**user_preference(), "content": {**user_preference()["content"], "statement": statement}}
        ],
    }
    response = api.post("/api/v1/observations/", body, format="json")
    [candidate] = response.json()["candidates"]
    assert candidate["status"] == "denied"
    _assert_stored_nowhere(key, answered=json.dumps(response.json()))


def test_a_secret_through_mgp_write_is_denied_and_stored_nowhere(settings, agent, key, logged):
    settings.CUSTODIAN_POLICY_FILE = PROFILE / "rules.yaml"
    settings.CUSTODIAN_READ_POLICY_FILE = PROFILE / "read_rules.yaml"
    settings.CUSTODIAN_MGP_WAIT_SECONDS = 0
    mem = memory(statement="Alice's deploy credentials", content={"statement": "creds", "key": key})
    response = call(agent, "write", {"memory": mem}, "write", subject={"kind": "user", "id": "pm-alice"})
    assert response.status_code in (403, 422), response.content
    assert response.json()["error"]["code"] == "MGP_POLICY_DENIED"
    _assert_stored_nowhere(key, answered=response.content.decode(), logged=logged.text)


def test_a_secret_in_an_mgp_source_is_refused_and_stored_nowhere(settings, agent, key):
    settings.CUSTODIAN_POLICY_FILE = PROFILE / "rules.yaml"
    settings.CUSTODIAN_READ_POLICY_FILE = PROFILE / "read_rules.yaml"
    settings.CUSTODIAN_MGP_WAIT_SECONDS = 0
    mem = memory(source={"kind": "chat", "ref": f"chat:alice:{key}"})
    response = call(agent, "write", {"memory": mem}, "write", subject={"kind": "user", "id": "pm-alice"})
    assert response.status_code == 403, response.content
    error = response.json()["error"]
    assert error["code"] == "MGP_POLICY_DENIED"
    assert error["details"]["reason"] == "secret_detected", error
    assert not EvidenceRevision.objects.exists() and not Proposal.objects.exists()
    _assert_stored_nowhere(key, answered=response.content.decode())
