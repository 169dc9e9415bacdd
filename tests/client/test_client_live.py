"""custodian-client against a live Custodian: real HTTP, a real executor worker, real refusals."""

import asyncio
import logging

import pytest
from custodian_client import AsyncCustodian, Custodian, RetryEvent, RetryPolicy
from custodian_client import errors as e

from tests.factories import make_agent
from tests.live import ALICE, OWNER_CONTEXT, alice_preference, make_reviewer, refusing_database

live = pytest.mark.django_db(transaction=True)


def _client(live_server, token: str, **kw) -> Custodian:
    return Custodian(live_server.url, token, **kw)


@pytest.mark.services
@live
def test_evidence_proposal_receipt_recall_feedback_and_lifecycle(live_server, agent, executor):
    reviewer = make_reviewer("pm-sdk", agent.tenant)
    with _client(live_server, agent.token) as custodian, _client(live_server, reviewer.token) as pm:
        evidence = custodian.register_evidence("conversation", "chat/alice/1", {"text": "Weekly, please."})
        proposal = custodian.propose(
            "create",
            memory=alice_preference("Alice prefers weekly summaries"),
            evidence=[evidence],
            policy_context=OWNER_CONTEXT,
        )
        assert proposal["classification"] == "auto_apply"
        receipt = custodian.wait_for_receipt(proposal["id"])
        memory_id = proposal["memory_id"]
        assert (receipt["outcome"], receipt["memory_id"], receipt["after_revision"]) == (
            "applied",
            memory_id,
            1,
        )
        assert custodian.receipt(receipt["id"])["hash"] == receipt["hash"]
        assert custodian.proposal(proposal["id"])["status"] == "applied"

        found = custodian.recall("weekly summaries", policy_context={"acting_for_subject": ALICE})
        item = found["results"][0]
        assert item["memory"]["memory_id"] == memory_id
        vote = custodian.feedback(found["recall_id"], memory_id, item["memory"]["revision"], "useful")
        assert vote["verdict"] == "useful"
        with pytest.raises(e.FeedbackAlreadyGiven):
            custodian.feedback(found["recall_id"], memory_id, item["memory"]["revision"], "not_useful")
        read = custodian.get_memory(memory_id, acting_for="user:pm-alice")
        assert read["memory"]["content"]["statement"] == "Alice prefers weekly summaries"

        expiry = custodian.expire(memory_id, "Alice asked to forget it", policy_context=OWNER_CONTEXT)
        assert custodian.wait_for_receipt(expiry["id"])["outcome"] == "applied"
        assert custodian.get_memory(memory_id)["memory"]["state"] == "expired"

        restore = custodian.restore(memory_id, "expired by mistake", policy_context=OWNER_CONTEXT)
        assert restore["status"] == "pending_review"
        with pytest.raises(e.WaitTimeout):
            custodian.wait_for_receipt(restore["id"], timeout=0)
        queued = {p["id"]: p for p in pm.review_queue()}
        pm.decide(restore["id"], "approve", reason="ok", action_digest=queued[restore["id"]]["action_digest"])
        assert custodian.wait_for_receipt(restore["id"])["outcome"] == "applied"
        assert custodian.get_memory(memory_id)["memory"]["state"] == "active"
        assert {r["proposal_id"] for r in custodian.receipts(memory=memory_id)} == {
            proposal["id"],
            expiry["id"],
            restore["id"],
        }


@pytest.mark.services
@live
def test_the_async_client_reaches_a_receipt_and_recalls(live_server, agent, executor):
    async def flow() -> tuple[str, str]:
        async with AsyncCustodian(live_server.url, agent.token) as custodian:
            evidence = await custodian.register_evidence("conversation", "chat/alice/2", {"text": "Daily."})
            proposal = await custodian.propose(
                "create",
                memory=alice_preference("Alice prefers daily standups", key="standup", value="daily"),
                evidence=[evidence],
                policy_context=OWNER_CONTEXT,
            )
            receipt = await custodian.wait_for_receipt(proposal["id"])
            found = await custodian.recall("daily standups", policy_context={"acting_for_subject": ALICE})
            return receipt["outcome"], found["results"][0]["memory"]["content"]["statement"]

    assert asyncio.run(flow()) == ("applied", "Alice prefers daily standups")


@live
def test_refusals_arrive_as_typed_errors(live_server, agent, other_agent):
    custodian = _client(live_server, agent.token)
    intruder = _client(live_server, other_agent.token)
    evidence = custodian.register_evidence("document", "doc-1", {"text": "x"})
    memory = alice_preference("Alice prefers weekly summaries")

    with pytest.raises(e.EvidenceMismatch) as denied:  # another tenant's evidence is unknown evidence
        intruder.propose("create", memory=memory, evidence=[evidence])
    assert denied.value.status == 422 and denied.value.proposal_id
    assert isinstance(denied.value, e.ProposalDenied)
    with pytest.raises(e.NotFound):
        intruder.get_evidence(evidence["evidence_id"])
    with pytest.raises(e.TenantMismatch):
        intruder.recall("x", policy_context={"tenant_id": "quant-desk"})
    with pytest.raises(e.ActingForNotGranted):
        intruder.recall("x", policy_context={"acting_for_subject": {"kind": "user", "id": "pm-bob"}})
    with pytest.raises(e.ValidationFailed) as invalid:
        custodian.propose("create", memory={**memory, "scope": "galaxy"}, evidence=[evidence])
    assert "memory" in invalid.value.errors
    smuggled = {**memory, "content": {**memory["content"], "factor": "momentum"}}
    with pytest.raises(e.ContentInvalid) as refused:  # the tenant's registered schema, by path
        custodian.propose("create", memory=smuggled, evidence=[evidence])
    assert isinstance(refused.value, e.ValidationFailed) and refused.value.registration_version == 1
    assert refused.value.errors[0]["path"] == "/content/factor"
    with pytest.raises(e.IdempotencyConflict):
        custodian.propose("create", memory=memory, evidence=[evidence], idempotency_key="k-1")
        custodian.propose(
            "create", memory=alice_preference("other"), evidence=[evidence], idempotency_key="k-1"
        )
    found = custodian.recall("anything")
    with pytest.raises(e.EvidenceExists):
        custodian.register_evidence("document", "doc-1", {"text": "again"})
    with pytest.raises(e.RecallNotFound):
        intruder.feedback(found["recall_id"], evidence["evidence_id"], 1, "useful")
    with pytest.raises(e.NotAuthenticated):
        _client(live_server, "cst_forged").recall("x")
    with pytest.raises(e.PermissionDenied):  # an agent token on the reviewers' endpoint
        custodian.review_queue()


@live
def test_a_real_429_is_retried_after_the_retry_after_the_server_sent(live_server, agent, settings, caplog):
    settings.CUSTODIAN_API_RATE = "1/s"
    retries: list[RetryEvent] = []
    custodian = _client(live_server, agent.token, on_retry=retries.append)
    with caplog.at_level(logging.INFO, logger="custodian_client"):
        answers = [custodian.recall("throttle me") for _ in range(3)]
    assert all(answer["recall_id"] for answer in answers)
    assert retries, "the server never throttled"
    assert {(event.status, event.retry_after, event.delay) for event in retries} == {(429, 1.0, 1.0)}
    assert "answered 429" in caplog.text


@pytest.mark.postgres
@live
def test_a_real_503_is_retried_after_the_retry_after_the_server_sent(live_server, agent):
    retries: list[RetryEvent] = []
    outage = refusing_database()

    def database_back(event: RetryEvent) -> None:
        retries.append(event)
        outage.__exit__(None, None, None)

    custodian = _client(live_server, agent.token, on_retry=database_back, retry=RetryPolicy(max_retries=2))
    outage.__enter__()
    evidence = custodian.register_evidence("document", "doc-outage", {"text": "written after the outage"})
    assert evidence["revision"] == 1
    assert [(event.status, event.retry_after, event.delay) for event in retries] == [(503, 1.0, 1.0)]


@live
def test_a_reviewer_returns_a_proposal_and_only_its_submitter_may_amend_it(live_server, agent):
    colleague = make_agent("quant-desk", "second-agent")  # same tenant, different agent
    pm = _client(live_server, make_reviewer("pm-amend", agent.tenant).token)
    custodian = _client(live_server, agent.token)
    run = custodian.register_evidence("backtest_run", "bt/amend", {"ic_mean": 0.012})
    fact = {
        "subject": {"kind": "org", "id": "quant-desk"},
        "scope": "org",
        "type": "semantic_fact",
        "content": {"statement": "momentum_12_1 IC is unstable"},
    }
    context = {"acting_for_subject": {"kind": "org", "id": "quant-desk"}, "risk_level": "medium"}
    proposal = custodian.propose("create", memory=fact, evidence=[run], policy_context=context)
    assert proposal["status"] == "pending_review"
    with pytest.raises(e.PermissionDenied):  # people decide, agents do not
        custodian.decide(proposal["id"], "approve", reason="me", action_digest=proposal["action_digest"])
    pm.decide(
        proposal["id"], "request_changes", reason="name the universe", action_digest=proposal["action_digest"]
    )

    better = {**fact, "content": {"statement": "momentum_12_1 IC is unstable on CSI800"}}
    with pytest.raises(e.NotSubmitter):
        _client(live_server, colleague.token).amend(
            proposal["id"], "create", memory=better, evidence=[run], policy_context=context
        )
    amended = custodian.amend(proposal["id"], "create", memory=better, evidence=[run], policy_context=context)
    assert amended["status"] == "pending_review" and amended["action_digest"] != proposal["action_digest"]
