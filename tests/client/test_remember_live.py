"""``remember``: evidence, proposal and receipt in one call, against a live server and a real worker."""

import asyncio

import pytest
from custodian_client import AsyncCustodian, Custodian
from custodian_client import errors as e

from evidence.models import EvidenceSource
from memory_core.models import Memory
from tests.live import ALICE, make_reviewer

live = pytest.mark.django_db(transaction=True)
DESK_FACT = {
    "about": "org:quant-desk",
    "type": "semantic_fact",
    "scope": "org",
    "evidence_kind": "backtest_run",
    "evidence_text": "backtest 2026-11: IC 0.031 -> 0.012 neutralised",
    "risk_level": "medium",
}


@pytest.mark.services
@live
def test_remember_stores_an_owner_preference_and_answers_its_receipt(live_server, agent, executor):
    with Custodian(live_server.url, agent.token) as custodian:
        outcome = custodian.remember("Alice prefers weekly summaries", about="user:pm-alice")

        assert outcome["status"] == "stored"
        receipt, proposal = outcome["receipt"], outcome["proposal"]
        assert receipt is not None and proposal is not None
        assert (receipt["outcome"], receipt["memory_id"]) == ("applied", outcome["memory_id"])
        assert outcome["proposal_id"] == proposal["id"] == receipt["proposal_id"]
        assert proposal["policy_context"]["acting_for_subject"] == ALICE
        read = custodian.get_memory(outcome["memory_id"], acting_for="user:pm-alice")
        assert read["memory"]["content"] == {"statement": "Alice prefers weekly summaries"}
        assert (read["memory"]["type"], read["memory"]["scope"]) == ("preference", "user")
    source = EvidenceSource.objects.get()  # the text is its own evidence
    assert str(source.pk) == proposal["evidence"][0]["evidence_id"]
    assert (source.kind, source.external_ref[:9]) == ("conversation", "remember/")
    assert source.revisions.get().content == {"text": "Alice prefers weekly summaries"}


@pytest.mark.services
@live
def test_a_remember_that_needs_review_stores_nothing_until_approved(live_server, agent, executor):
    reviewer = make_reviewer("pm-remember", agent.tenant)
    custodian, pm = Custodian(live_server.url, agent.token), Custodian(live_server.url, reviewer.token)
    with custodian, pm:
        statement = "momentum_12_1 shows unstable IC after industry neutralisation"
        outcome = custodian.remember(statement, **DESK_FACT)

        assert (outcome["status"], outcome["receipt"]) == ("pending_review", None)
        assert not Memory.objects.filter(pk=outcome["memory_id"]).exists()
        queued = {p["id"]: p for p in pm.review_queue()}
        digest = queued[outcome["proposal_id"]]["action_digest"]
        pm.decide(outcome["proposal_id"], "approve", reason="the backtest says so", action_digest=digest)
        receipt = custodian.wait_for_receipt(outcome["proposal_id"], timeout=60)
    assert (receipt["outcome"], receipt["memory_id"]) == ("applied", outcome["memory_id"])
    assert Memory.objects.get(pk=outcome["memory_id"]).content["statement"] == statement


@pytest.mark.services
@live
def test_saying_it_again_in_other_words_case_and_spacing_answers_duplicate(live_server, agent, executor):
    with Custodian(live_server.url, agent.token) as custodian:
        first = custodian.remember("Alice prefers weekly summaries", about="user:pm-alice", wait=60)
        again = custodian.remember("  alice prefers WEEKLY summaries. ", about="user:pm-alice", wait=60)
        other = custodian.remember("Alice prefers daily summaries", about="user:pm-alice", wait=60)
        found = custodian.recall("summaries", policy_context={"acting_for_subject": ALICE})

    assert first["status"] == other["status"] == "stored"
    assert (again["status"], again["memory_id"]) == ("duplicate", first["memory_id"])
    assert Memory.objects.filter(subject_id="pm-alice").count() == 2
    statements = [item["memory"]["content"]["statement"] for item in found["results"]]
    assert sorted(statements) == ["Alice prefers daily summaries", "Alice prefers weekly summaries"]


@pytest.mark.services
@live
def test_remembering_the_same_thing_under_its_dedupe_key_answers_duplicate(live_server, agent, executor):
    with Custodian(live_server.url, agent.token) as custodian:
        kept = dict(about="user:pm-alice", dedupe_key="pref:pm-alice:cadence", wait=60)
        first = custodian.remember("Alice prefers weekly summaries", **kept)
        again = custodian.remember("Alice prefers weekly summaries", **kept)

        assert first["status"] == "stored"
        assert (again["status"], again["memory_id"]) == ("duplicate", first["memory_id"])
        assert again["proposal_id"] and again["proposal_id"] != first["proposal_id"]
        assert (again["proposal"], again["receipt"]) == (None, None)
        assert Memory.objects.filter(dedupe_key="pref:pm-alice:cadence").count() == 1
        with pytest.raises(e.ContradictsActiveMemory):  # any other denial still raises
            custodian.remember("Alice prefers daily summaries", **kept)


@live
def test_a_malformed_about_is_refused_before_anything_is_sent(live_server, agent):
    with Custodian(live_server.url, agent.token) as custodian:
        for about in ("pm-alice", "user:", ":pm-alice", " :x"):
            with pytest.raises(ValueError, match="kind:id"):
                custodian.remember("Alice prefers weekly summaries", about=about)
        with pytest.raises(ValueError, match="acting_for must be 'kind:id'"):
            custodian.remember("Alice prefers weekly summaries", about="user:pm-alice", acting_for="pm")
    assert not EvidenceSource.objects.exists()


@live
def test_without_a_receipt_inside_the_wait_the_remember_is_queued(live_server, agent):
    # No executor worker runs in this test, so the allowed proposal cannot be applied.
    with Custodian(live_server.url, agent.token) as custodian:
        outcome = custodian.remember("Alice prefers charts", about="user:pm-alice", wait=0.5)
    assert (outcome["status"], outcome["receipt"]) == ("queued", None)
    assert outcome["proposal"] is not None and outcome["proposal"]["classification"] == "auto_apply"
    assert not Memory.objects.filter(pk=outcome["memory_id"]).exists()


@pytest.mark.services
@live
def test_the_async_client_remembers_in_one_call(live_server, agent, executor):
    async def flow() -> tuple[dict, dict, dict]:
        async with AsyncCustodian(live_server.url, agent.token) as custodian:
            stored = await custodian.remember(
                "Alice prefers daily standups", about="user:pm-alice", dedupe_key="standup", wait=60
            )
            again = await custodian.remember(
                "Alice prefers daily standups", about="user:pm-alice", dedupe_key="standup", wait=60
            )
            pending = await custodian.remember("value factor decays after 2020", **DESK_FACT)
            return dict(stored), dict(again), dict(pending)

    stored, again, pending = asyncio.run(flow())
    assert stored["status"] == "stored" and stored["receipt"]["outcome"] == "applied"
    assert (again["status"], again["memory_id"]) == ("duplicate", stored["memory_id"])
    assert (pending["status"], pending["receipt"]) == ("pending_review", None)
