"""Numbers at the edge of IEEE 754: refused, or stored, read back and hashed byte for byte on both databases.

PostgreSQL's jsonb keeps numbers as decimals and hands an integral one back as an integer
(``1e16`` comes back as ``10000000000000000``); SQLite keeps the JSON text. What the API
accepts must hash the same before storing and after reading back, and verify.
"""

import json

import pytest
from django.core.management import CommandError, call_command

from core.canonical import digest
from evidence.models import EvidenceRevision, EvidenceSource
from evidence.services import register_evidence
from executor.verification import verify_tenant
from memory_core.models import Memory
from proposals.models import OutboxEntry, Proposal
from tests.factories import apply_released, create_payload, make_evidence, user_preference

PROBLEM = "application/problem+json"

# The literal as a client writes it, and whether it may be stored.
ACCEPTED = {
    "2**53-1": str(2**53 - 1),
    "-(2**53-1)": str(-(2**53 - 1)),
    "1.5": "1.5",
    "-0.0": "-0.0",
    "1e-7": "1e-7",
    "5e-324": "5e-324",
    "2**53-2 as float": "9007199254740990.0",
    "0.1+0.2": "0.30000000000000004",
}
REFUSED = {
    "2**53": str(2**53),
    "2**53 as float": "9007199254740992.0",
    "1e16": "1e16",
    "-1e16": "-1e16",
    "1E+16": "1E+16",
    "largest double": "1.7976931348623157e308",
    "10**400": "1" + "0" * 400,
    "1e400": "1e400",
}


def _post_raw(client, url: str, raw: str):
    return client.generic(
        "POST", url, data=raw.encode(), content_type="application/json", HTTP_IDEMPOTENCY_KEY="k"
    )


def _evidence_body(literal: str) -> str:
    return json.dumps({"kind": "backtest_run", "external_ref": "run-1", "content": {"x": "__N__"}}).replace(
        '"__N__"', literal
    )


def _proposal_body(agent, literal: str) -> str:
    memory = user_preference()
    memory["content"]["preference_value"] = "__N__"
    body = json.dumps(create_payload(memory, [make_evidence(agent.agent)]))
    return body.replace('"__N__"', literal)


def _assert_refused(response) -> None:
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "malformed_json"


@pytest.mark.parametrize("literal", REFUSED.values(), ids=REFUSED.keys())
def test_evidence_with_a_number_jsonb_would_change_is_refused_and_nothing_is_stored(api, literal):
    _assert_refused(_post_raw(api, "/api/v1/evidence/", _evidence_body(literal)))
    assert not EvidenceSource.objects.exists()


@pytest.mark.parametrize("literal", REFUSED.values(), ids=REFUSED.keys())
def test_a_proposal_with_a_number_jsonb_would_change_is_refused_and_nothing_is_stored(agent, api, literal):
    _assert_refused(_post_raw(api, "/api/v1/proposals/", _proposal_body(agent, literal)))
    assert not Proposal.objects.exists() and not OutboxEntry.objects.exists()


@pytest.mark.parametrize("literal", REFUSED.values(), ids=REFUSED.keys())
def test_an_observation_with_a_number_jsonb_would_change_is_refused(api, literal):
    raw = json.dumps({"kind": "conversation", "fields": {"x": "__N__"}}).replace('"__N__"', literal)
    _assert_refused(_post_raw(api, "/api/v1/observations/", raw))
    assert not Proposal.objects.exists()


@pytest.mark.parametrize("literal", REFUSED.values(), ids=REFUSED.keys())
def test_a_batch_with_a_number_jsonb_would_change_is_refused(agent, api, literal):
    raw = '{"items": [{"idempotency_key": "a", "proposal": ' + _proposal_body(agent, literal) + "}]}"
    _assert_refused(_post_raw(api, "/api/v1/proposals/batch", raw))
    assert not Proposal.objects.exists()


@pytest.mark.parametrize("literal", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_evidence_at_the_edge_is_stored_read_back_and_hashed_identically(agent, api, literal):
    sent = json.loads(literal)
    response = _post_raw(api, "/api/v1/evidence/", _evidence_body(literal))
    assert response.status_code == 201, response.content
    stored = EvidenceRevision.objects.get()
    assert stored.content == {"x": sent}
    assert digest(stored.content) == stored.content_hash == response.json()["content_hash"]
    detail = api.get(f"/api/v1/evidence/{stored.source_id}/").json()["revisions"][0]
    assert detail["content"] == {"x": sent} and digest(detail["content"]) == stored.content_hash
    assert verify_tenant(agent.tenant.pk).ok


@pytest.mark.parametrize("literal", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_a_memory_at_the_edge_is_applied_read_back_and_verifies(agent, api, literal):
    response = _post_raw(api, "/api/v1/proposals/", _proposal_body(agent, literal))
    assert response.status_code == 201, response.content
    receipt = apply_released(Proposal.objects.get())
    assert receipt.outcome == "applied"
    memory = Memory.objects.get()
    assert memory.content["preference_value"] == json.loads(literal)
    served = api.get(f"/api/v1/memories/{memory.pk}/").json()["memory"]
    assert served["content"]["preference_value"] == json.loads(literal)
    assert verify_tenant(agent.tenant.pk).ok


def test_evidence_stored_with_1e16_before_the_parser_refused_it_still_verifies(agent):
    """Such a row (read back from jsonb as an integer) hashes as the double it was written as."""
    revision = register_evidence(
        agent=agent.agent, kind="backtest_run", external_ref="old", content={"x": 1e16}
    )
    revision.refresh_from_db()
    assert digest(revision.content) == revision.content_hash
    assert verify_tenant(agent.tenant.pk).ok


def unhashable_evidence(agent) -> EvidenceRevision:
    """An evidence row no API path writes: an integer no double holds, put there behind the services."""
    source = EvidenceSource.objects.create(
        tenant_id=agent.tenant.pk, kind="backtest_run", external_ref="by-hand", created_by=agent.agent
    )
    return EvidenceRevision.objects.create(
        tenant_id=agent.tenant.pk,
        source=source,
        revision=1,
        content={"x": 2**53 + 1},
        content_hash="0" * 64,
        created_by=agent.agent,
    )


def test_evidence_that_cannot_be_hashed_fails_verification_by_name(agent):
    revision = unhashable_evidence(agent)
    result = verify_tenant(agent.tenant.pk)
    assert not result.ok
    assert result.problems == [
        f"evidence {revision.source_id}@1 content cannot be hashed ("
        "9007199254740993 exceeds safe integer domain for JSON floats)"
    ]


def test_verify_receipts_names_evidence_it_cannot_hash_in_one_line(agent, capsys):
    revision = unhashable_evidence(agent)
    with pytest.raises(CommandError, match=f"evidence {revision.source_id}@1 content cannot be hashed"):
        call_command("verify_receipts", "--tenant", agent.tenant.name)
    assert f"BROKEN {agent.tenant.name}: evidence {revision.source_id}@1" in capsys.readouterr().err


def test_a_proposal_stored_with_1e16_before_the_parser_refused_it_is_applied_and_verifies(agent):
    """Its fields read back from jsonb as an integer; the executor hashes it as the double it was."""
    from tests.factories import submit

    memory = user_preference()
    memory["content"]["preference_value"] = 1e16
    proposal = submit(agent.agent, create_payload(memory, [make_evidence(agent.agent)]))
    assert proposal.status == Proposal.Status.RELEASED
    assert apply_released(proposal).outcome == "applied"
    assert Memory.objects.get().content["preference_value"] == 1e16
    assert verify_tenant(agent.tenant.pk).ok
