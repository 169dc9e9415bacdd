"""Bulk seeding writes worlds the real audit, recall, review queue and executor accept."""

import re

import pytest
from django.core.management import call_command

from bench.seed import (
    floor_copy,
    floor_executemany,
    floor_rows,
    seed_applied_memories,
    seed_pending_proposals,
    seed_released_backlog,
)
from bench.textgen import TextGenerator
from executor.audit import memory_problems
from executor.models import Receipt
from executor.services import lease_due_entries
from memory_core.models import Memory, MemoryEvidence
from proposals.models import OutboxEntry, Proposal
from reviews.selectors import review_queue
from tests.factories import apply_entry, make_evidence, make_person

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

APPLIED, PENDING, BACKLOG = 300, 50, 40


@pytest.fixture
def world(agent):
    """The seeding arguments every function takes: tenant, agent, five evidence revisions, text."""
    evidence = [make_evidence(agent.agent) for _ in range(5)]
    return {
        "tenant": agent.tenant,
        "agent": agent.agent,
        "evidence": evidence,
        "text": TextGenerator(seed=7, vocabulary=400),
    }


@pytest.fixture
def seeded(world):
    seed_applied_memories(**world, count=APPLIED, batch=120)
    return world


def test_seeded_memories_verify_against_their_receipts(seeded, capsys):
    call_command("verify_receipts")
    assert f"{APPLIED} receipts verified, memories match" in capsys.readouterr().out
    assert memory_problems(seeded["tenant"].id) == []
    assert Memory.objects.filter(tenant=seeded["tenant"]).count() == APPLIED
    assert Memory.history.filter(tenant_id=seeded["tenant"].id).count() == APPLIED
    assert MemoryEvidence.objects.filter(tenant=seeded["tenant"]).count() >= APPLIED


def test_seeded_proposals_carry_the_real_engines_verdicts(seeded):
    kinds = set(
        Proposal.objects.filter(tenant=seeded["tenant"]).values_list(
            "memory_type", "classification", "status"
        )
    )
    assert kinds == {
        ("semantic_fact", "review_required", "applied"),
        ("preference", "auto_apply", "applied"),
        ("episodic_event", "policy_gated", "applied"),
    }
    reviewed = Receipt.objects.filter(proposal__classification="review_required")
    assert reviewed.exists() and all(receipt.decision_ids for receipt in reviewed)


def test_an_interrupted_seed_leaves_a_chain_that_verifies(world):
    def interrupt(done):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        seed_applied_memories(**world, count=50, batch=10, progress=interrupt)
    call_command("verify_receipts")
    assert Receipt.objects.count() in (10, 20)  # the first batch, and the one written meanwhile


def test_recall_finds_seeded_memories_by_a_query_word(seeded, api):
    for word in seeded["text"].query_words(3):
        response = api.post("/api/v1/recall/search", {"query": word, "limit": 50}, format="json")
        assert response.status_code == 200, response.content
        statements = [item["memory"]["content"]["statement"] for item in response.json()["results"]]
        assert statements, f"no memory found for {word!r}"
        assert all(word in re.findall(r"\w+", statement) for statement in statements), statements
        assert len(statements) < APPLIED / 5  # selective, not a match-all


def test_seeded_pending_proposals_are_in_the_review_queue(world):
    seed_pending_proposals(**world, count=PENDING)
    reviewer = make_person("pm-queue", world["tenant"])
    queue = list(review_queue(user=reviewer, order="risk"))
    assert len(queue) == PENDING
    assert {p.risk_rank for p in queue} == {1, 2, 3}
    assert [p.risk_rank for p in queue] == sorted((p.risk_rank for p in queue), reverse=True)
    assert all(p.evidence_links.exists() for p in queue[:5])


def test_backlog_is_swept_and_applied_by_the_executor(seeded, capsys):
    entry_ids = seed_released_backlog(**seeded, count=BACKLOG)
    leased = lease_due_entries(limit=BACKLOG + 10)
    assert set(leased) == set(entry_ids)
    outcomes = {
        apply_entry(entry_id, {"host": "test", "pid": 0, "task_id": str(entry_id)}).outcome
        for entry_id in entry_ids
    }
    assert outcomes == {Receipt.Outcome.APPLIED}
    assert not OutboxEntry.objects.exclude(status=OutboxEntry.Status.DONE).exists()
    call_command("verify_receipts")
    assert f"{APPLIED + BACKLOG} receipts verified, memories match" in capsys.readouterr().out


def test_floor_writes_the_same_rows_and_leaves_nothing_behind(world):
    rows = floor_rows(**world, count=60)
    by_copy, by_executemany = floor_copy(table_rows=rows), floor_executemany(table_rows=rows)
    assert by_copy.rows == by_executemany.rows == rows.rows > 60 * 7
    assert by_copy.rows_per_second > 0 and by_executemany.memories_per_second > 0
    assert not Memory.objects.exists() and not Receipt.objects.exists()
