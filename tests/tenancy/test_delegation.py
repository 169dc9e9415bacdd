"""Agents cannot vouch for their own authority: acting-for is a grant, system identities hold no token."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory_core.models import Memory
from proposals.models import Proposal
from tenancy.models import AgentToken, Delegation
from tenancy.services import grant_delegation, system_agent
from tests.factories import create_payload, make_agent, make_evidence, user_preference

BOB = {"kind": "user", "id": "bob"}


@pytest.fixture
def bobs_secret(remember):
    return remember("Bob's bonus is 40k", subject=BOB, sensitivity="confidential")


def _get(api, memory, **params):
    return api.get(f"/api/v1/memories/{memory.pk}/", params)


def test_acting_for_a_subject_without_a_grant_is_refused_on_get(api, bobs_secret):
    response = _get(api, bobs_secret, acting_for="user:bob")
    assert (response.status_code, response.json()["code"]) == (403, "acting_for_not_granted")
    assert _get(api, bobs_secret).json()["return_mode"] == "masked"


def test_a_live_grant_opens_the_owner_view_until_it_is_revoked(agent, api, bobs_secret):
    call_command(
        "grant_delegation",
        "--tenant",
        "quant-desk",
        "--agent",
        "research-agent",
        "--subject",
        "user:bob",
        stdout=StringIO(),
    )
    assert _get(api, bobs_secret, acting_for="user:bob").json()["return_mode"] == "raw"
    call_command(
        "revoke_delegation",
        "--tenant",
        "quant-desk",
        "--agent",
        "research-agent",
        "--subject",
        "user:bob",
        stdout=StringIO(),
    )
    assert _get(api, bobs_secret, acting_for="user:bob").status_code == 403
    grant = Delegation.objects.get(agent=agent.agent, subject_id="bob")
    assert [h.history_type for h in grant.history.order_by("history_date")] == ["+", "~"]


def test_an_expired_grant_is_no_grant(agent, api, bobs_secret):
    grant = grant_delegation(agent=agent.agent, subject=BOB)
    Delegation.objects.filter(pk=grant.pk).update(expires_at="2000-01-01T00:00:00Z")
    assert _get(api, bobs_secret, acting_for="user:bob").status_code == 403


def test_recall_refuses_an_ungranted_acting_for(api, bobs_secret):
    body = {"query": "bonus", "policy_context": {"acting_for_subject": BOB}}
    response = api.post("/api/v1/recall/search", body, format="json")
    assert (response.status_code, response.json()["code"]) == (403, "acting_for_not_granted")


def test_another_agent_cannot_withdraw_a_memory_by_claiming_its_owner(agent, bobs_secret):
    intruder = make_agent("quant-desk", "helper-agent", acts_for=())
    body = {
        "action": "delete",
        "memory_id": str(bobs_secret.pk),
        "base_revision": bobs_secret.revision,
        "reason": "Bob asked me to",
        "policy_context": {"acting_for_subject": BOB, "consent_basis": "explicit", "risk_level": "low"},
    }
    response = intruder.client.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY="d")
    assert (response.status_code, response.json()["code"]) == (403, "acting_for_not_granted")
    assert not Proposal.objects.filter(submitted_by=intruder.agent).exists()
    assert Memory.objects.get(pk=bobs_secret.pk).state == "active"


def test_a_proposal_claiming_an_ungranted_subject_is_refused_and_stores_nothing(api, agent):
    context = {"acting_for_subject": BOB, "consent_basis": "explicit", "risk_level": "low"}
    payload = create_payload(user_preference(subject=BOB), [make_evidence(agent.agent)], context)
    response = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="p")
    assert (response.status_code, response.json()["code"]) == (403, "acting_for_not_granted")
    assert not Proposal.objects.exists()


def test_an_agent_acts_for_itself_without_a_grant(db):
    handle = make_agent("quant-desk", "solo-agent", acts_for=())
    context = {"acting_for_subject": {"kind": "agent", "id": "solo-agent"}}
    payload = create_payload(user_preference(), [make_evidence(handle.agent)], context)
    response = handle.client.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="s")
    assert response.status_code == 201, response.content


@pytest.mark.parametrize("name", ["custodian-system", "custodian-retention"])
def test_reserved_identities_never_get_a_token(agent, name):
    with pytest.raises(CommandError, match="reserved"):
        call_command("create_agent_token", "--tenant", "quant-desk", "--agent", name, stdout=StringIO())
    assert not AgentToken.objects.filter(agent__name=name).exists()


def test_a_token_of_a_system_agent_is_not_accepted(agent, remember, client):
    memory = remember("Alice's review notes", sensitivity="restricted")
    system = system_agent(tenant_id=agent.tenant.pk)
    AgentToken.objects.create(agent=system, key_hash=AgentToken.hash_key("cst_legacy"), hint="cst_legacy")
    body = {"action": "expire", "memory_id": str(memory.pk), "base_revision": memory.revision, "reason": "x"}
    response = client.post(
        "/api/v1/proposals/",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION="Bearer cst_legacy",
        HTTP_IDEMPOTENCY_KEY="x",
    )
    assert response.status_code == 401
    assert not Proposal.objects.filter(action="expire").exists()


def test_only_the_submitter_withdraws_a_proposal(agent, api):
    payload = create_payload(user_preference(content={"statement": "x"}), [], None)
    proposal_id = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="w").json()[
        "id"
    ]
    colleague = make_agent("quant-desk", "colleague-agent")
    response = colleague.client.post(f"/api/v1/proposals/{proposal_id}/withdraw/")
    assert (response.status_code, response.json()["code"]) == (403, "not_submitter")
    assert Proposal.objects.get(pk=proposal_id).status == "pending_review"
    assert api.post(f"/api/v1/proposals/{proposal_id}/withdraw/").json()["status"] == "withdrawn"
