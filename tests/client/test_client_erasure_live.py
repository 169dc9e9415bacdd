"""custodian-client asks for an erasure, reviewers approve it over HTTP, a worker applies it."""

import asyncio

import pytest
from custodian_client import AsyncCustodian, Custodian
from custodian_client import errors as e

from executor.offline import verify_export
from tenancy.services import grant_delegation
from tests.factories import make_agent
from tests.live import OWNER_CONTEXT, alice_preference, make_reviewer
from tests.workers import wait_until


def _remembered(custodian, ref: str, statement: str):
    """Register a conversation and remember Alice's statement citing it; return both.

    The conversation's text is not the statement: evidence stays when a subject is erased.
    """
    said = custodian.register_evidence("conversation", ref, {"text": "She said so."})
    proposal = custodian.propose(
        "create", memory=alice_preference(statement), evidence=[said], policy_context=OWNER_CONTEXT
    )
    custodian.wait_for_receipt(proposal["id"])
    return said, proposal


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_erase_a_subject_follow_it_and_verify_its_certificate(live_server, agent, executor):
    reviewers = [make_reviewer(f"pm-erase-{n}", agent.tenant) for n in range(2)]
    with Custodian(live_server.url, agent.token) as custodian:
        _, created = _remembered(custodian, "chat/alice/erase", "Alice prefers summaries on fridays")

        erasure = custodian.erase_subject("user", "pm-alice", "Alice asked to be forgotten")
        assert erasure["status"] == "pending_review"
        assert [m["memory_id"] for m in erasure["plan"]["members"]] == [created["memory_id"]]
        with pytest.raises(e.ErasureNotCertified):
            custodian.erasure_certificate(erasure["erasure_id"])
        for reviewer in reviewers:
            with Custodian(live_server.url, reviewer.token) as pm:
                queued = {p["id"]: p for p in pm.review_queue()}
                digest = queued[erasure["erasure_id"]]["action_digest"]
                pm.decide(erasure["erasure_id"], "approve", reason="checked the list", action_digest=digest)
        wait_until(
            lambda: custodian.erasure(erasure["erasure_id"])["status"] == "applied",
            timeout=120,
            what="the erasure to apply",
        )
        certificate = custodian.erasure(erasure["erasure_id"])["certificate"]
        assert certificate["clean"] and certificate["removed"][0]["memory_id"] == created["memory_id"]
        proof = verify_export(custodian.erasure_certificate(erasure["erasure_id"]).splitlines())
        assert proof.receipts == 2
        with pytest.raises(e.NotFound):
            custodian.get_memory(created["memory_id"])
        # The erasure revoked the grant to act for Alice; an operator grants it anew for what follows.
        assert not agent.agent.delegations.live().filter(subject_id="pm-alice").exists()
        grant_delegation(agent=agent.agent, subject={"kind": "user", "id": "pm-alice"})

        shared, resting = _remembered(custodian, "chat/alice/shared", "Alice prefers summaries by email")
        retraction = custodian.retract_source(shared["evidence_id"], "shared by mistake")
        assert retraction["status"] == "pending_review"
        assert retraction["erasure_of"]["kind"] == "source"
        assert [m["memory_id"] for m in retraction["plan"]["members"]] == [resting["memory_id"]]

    stranger = make_agent(agent.tenant.name, "erasure-stranger", acts_for=())

    async def refused() -> None:
        async with AsyncCustodian(live_server.url, stranger.token) as other:
            with pytest.raises(e.ErasureNotAllowed):
                await other.erase_subject("user", "pm-alice", "not mine to ask")
            with pytest.raises(e.ErasureNotFound):
                await other.erasure(erasure["erasure_id"])

    asyncio.run(refused())
