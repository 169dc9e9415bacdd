"""The Python SDK raises ``SecretDetected`` for the firewall's refusals, with the findings it was sent."""

from custodian_client import errors

from tests.admission.conftest import aws_key
from tests.factories import create_payload, make_evidence, owner_context, user_preference


def test_a_denied_secret_and_refused_evidence_raise_secret_detected(agent, api):
    content = {**user_preference()["content"], "preference_value": aws_key()}
    body = create_payload(user_preference(content=content), [make_evidence(agent.agent)], owner_context())
    denied = api.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY="k")
    refused = api.post(
        "/api/v1/evidence/",
        {"kind": "document", "external_ref": "d/1", "content": {"text": aws_key()}},
        format="json",
    )
    proposal_error = errors.error_for(denied.status_code, denied.json())
    evidence_error = errors.error_for(refused.status_code, refused.json())
    for error in (proposal_error, evidence_error):
        assert isinstance(error, errors.SecretDetected) and isinstance(error, errors.ProposalDenied)
        assert [finding["detector"] for finding in error.findings] == ["credentials"]
    assert proposal_error.proposal_id == denied.json()["proposal_id"]
    assert evidence_error.proposal_id == ""
