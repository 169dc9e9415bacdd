"""The executor service: exactly-once effect, compare-and-swap, re-verification, receipts."""

import pytest
from django.core.management import call_command

from executor.models import Receipt
from memory_core.models import Memory
from proposals.models import OutboxEntry, Proposal
from proposals.services import withdraw_proposal
from provenance.services import invalidate_evidence_revision
from tests.factories import apply_entry, create_payload, make_evidence, owner_context, submit, user_preference

WORKER = {"host": "test-host", "pid": 1, "task_id": "task"}


def _apply(proposal) -> Receipt:
    entry = OutboxEntry.objects.filter(proposal=proposal).latest("created_at")
    return apply_entry(entry.id, WORKER)  # a worker identity the tests can check


def _update(agent, memory, statement, base_revision=None):
    return submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(memory.id),
            "base_revision": base_revision or memory.revision,
            "changes": {"content": {"statement": statement, "preference_key": "summary_cadence"}},
            "evidence": [make_evidence(agent.agent).binding()],
            "policy_context": owner_context(),
        },
    )


def test_auto_proposal_applies_as_revision_1_with_a_receipt(agent):
    evidence = make_evidence(agent.agent)
    proposal = submit(agent.agent, create_payload(user_preference(), [evidence]))
    receipt = _apply(proposal)
    memory = Memory.objects.get(pk=proposal.target_id)
    proposal.refresh_from_db()
    assert receipt.outcome == Receipt.Outcome.APPLIED
    assert (memory.revision, memory.state, memory.statement) == (
        1,
        "active",
        "Alice prefers weekly summaries",
    )
    assert (receipt.before_revision, receipt.after_revision) == (None, 1)
    assert receipt.after_content_hash == memory.content_hash
    assert receipt.action_digest == proposal.action_digest
    assert receipt.evidence == [evidence.binding()]
    assert receipt.executor == WORKER
    assert receipt.prev_hash == Receipt.GENESIS_HASH and receipt.seq == 1
    assert proposal.status == Proposal.Status.APPLIED
    assert list(memory.evidence_links.values_list("evidence_revision_id", "memory_revision")) == [
        (evidence.id, 1)
    ]
    assert memory.history.count() == 1
    assert memory.history.first().history_change_reason == f"receipt:{receipt.id}"


def test_update_applies_as_next_revision(agent, applied_memory):
    proposal = _update(agent, applied_memory, "Alice prefers daily summaries")
    receipt = _apply(proposal)
    applied_memory.refresh_from_db()
    assert receipt.outcome == "applied"
    assert (receipt.before_revision, receipt.after_revision) == (1, 2)
    assert applied_memory.revision == 2
    assert applied_memory.statement == "Alice prefers daily summaries"
    assert applied_memory.history.count() == 2
    assert applied_memory.evidence_links.filter(memory_revision=2).count() == 1


def test_two_updates_on_one_base_revision_apply_exactly_once(agent, applied_memory):
    first = _update(agent, applied_memory, "Alice prefers daily summaries")
    second = _update(agent, applied_memory, "Alice prefers monthly summaries")
    first_receipt, second_receipt = _apply(first), _apply(second)
    applied_memory.refresh_from_db()
    second.refresh_from_db()
    assert (first_receipt.outcome, second_receipt.outcome) == ("applied", "stale")
    assert applied_memory.revision == 2
    assert applied_memory.statement == "Alice prefers daily summaries"
    assert applied_memory.history.count() == 2  # the stale one wrote nothing
    assert second_receipt.before_revision == second_receipt.after_revision == 2
    assert second.status == Proposal.Status.NOT_APPLIED and second.outcome == "stale"


def test_running_the_same_entry_twice_has_one_effect_and_one_receipt(agent):
    proposal = submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    first, second = _apply(proposal), _apply(proposal)
    assert first.id == second.id
    assert Receipt.objects.count() == 1
    assert Memory.history.count() == 1
    assert OutboxEntry.objects.get(proposal=proposal).status == OutboxEntry.Status.DONE


def test_evidence_invalidated_after_release_blocks_the_write(agent):
    evidence = make_evidence(agent.agent)
    proposal = submit(agent.agent, create_payload(user_preference(), [evidence]))
    invalidate_evidence_revision(revision=evidence, reason="data leak found")
    receipt = _apply(proposal)
    assert receipt.outcome == Receipt.Outcome.EVIDENCE_INVALID
    assert "invalidated" in receipt.reason
    assert not Memory.objects.exists()


def test_withdrawn_proposal_executes_as_a_no_op(agent):
    proposal = submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    withdraw_proposal(agent=agent.agent, proposal=proposal)
    receipt = _apply(proposal)
    assert receipt.outcome == Receipt.Outcome.WITHDRAWN
    assert not Memory.objects.exists()


def test_changed_frozen_action_is_refused(agent):
    proposal = submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    Proposal.objects.filter(pk=proposal.pk).update(fields={**proposal.fields, "confidence": 0.01})
    receipt = _apply(proposal)
    assert receipt.outcome == Receipt.Outcome.DIGEST_MISMATCH
    assert not Memory.objects.exists()


def test_gated_proposal_whose_gate_fails_is_escalated_to_review(agent, applied_memory):
    event = user_preference(type="episodic_event", content={"statement": "Alice asked for the IC table"})
    event["dedupe_key"] = "event:ic-table"
    first = submit(agent.agent, create_payload(event, [make_evidence(agent.agent)]))
    event["content"] = {"statement": "Alice asked for the IC table again"}
    second = submit(agent.agent, create_payload(event, [make_evidence(agent.agent)]))
    receipt = _apply(first)  # the second proposal is still open on the same dedupe key
    first.refresh_from_db()
    assert receipt.outcome == Receipt.Outcome.GATE_FAILED
    assert receipt.reason == "no_open_conflict"
    assert first.status == Proposal.Status.PENDING_REVIEW
    assert first.classification == Proposal.Classification.REVIEW_REQUIRED
    assert "gate_failed:no_open_conflict" in first.reason_codes
    assert second.status == Proposal.Status.RELEASED
    assert Memory.objects.count() == 1  # only the fixture's memory


def test_failing_entry_is_dead_lettered_after_the_attempt_cap(agent, settings):
    settings.CUSTODIAN_OUTBOX_MAX_ATTEMPTS = 2
    proposal = submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    entry = OutboxEntry.objects.get(proposal=proposal)
    OutboxEntry.objects.filter(pk=entry.pk).update(attempts=2)
    assert apply_entry(entry.id, WORKER) is None
    entry.refresh_from_db()
    assert entry.status == OutboxEntry.Status.DEAD
    assert not Memory.objects.exists()


def test_requeue_of_a_dead_entry_writes_its_own_receipt_and_then_applies(agent):
    from executor.services import requeue_dead_entry

    proposal = submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    entry = OutboxEntry.objects.get(proposal=proposal)
    OutboxEntry.objects.filter(pk=entry.pk).update(status=OutboxEntry.Status.DEAD, last_error="boom")
    successor = requeue_dead_entry(entry=entry, requested_by="auditor")
    applied = apply_entry(successor.id, WORKER)
    requeue_receipt = Receipt.objects.get(outbox_entry=entry)
    assert requeue_receipt.outcome == Receipt.Outcome.REQUEUED
    assert "auditor" in requeue_receipt.reason
    assert applied.outcome == Receipt.Outcome.APPLIED and applied.seq == requeue_receipt.seq + 1
    call_command("verify_receipts")


def test_receipts_cannot_be_changed_or_deleted_through_the_orm(agent, applied_memory):
    receipt = Receipt.objects.get()
    with pytest.raises(TypeError):
        receipt.save()
    with pytest.raises(TypeError):
        receipt.delete()
    with pytest.raises(TypeError):
        Receipt.objects.update(outcome="stale")
    with pytest.raises(TypeError):
        Receipt.objects.all().delete()


def test_a_batch_that_fails_outside_any_entry_is_put_back_not_left_leased(agent, monkeypatch):
    """A failure before the apply (the claim itself) records an attempt: nothing stays leased to a task
    that ended."""
    from executor import services

    proposal = submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    ids = services.lease_due_entries(limit=10)
    assert [str(i) for i in ids] == [str(OutboxEntry.objects.get(proposal=proposal).pk)]

    def claim_fails(entry_ids):
        raise RuntimeError("claim failed")

    monkeypatch.setattr(services, "_claim", claim_fails)
    with pytest.raises(RuntimeError):
        services.apply_entries(entry_ids=ids, worker=WORKER)
    entry = OutboxEntry.objects.get(proposal=proposal)
    assert entry.status == OutboxEntry.Status.PENDING
    assert entry.last_error == "RuntimeError: claim failed"
    assert (entry.lease_expires_at, entry.lease_holder_pid) == (None, None)
