"""The executor's batch path: one transaction per batch, each entry still exactly once."""

import threading

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from executor.models import Receipt
from executor.services import apply_entries, lease_due_entries, lease_for_sweep
from memory_core.models import Memory
from proposals.models import OutboxEntry, Proposal
from proposals.services import withdraw_proposal
from tests.factories import create_payload, make_evidence, submit, user_preference

pytestmark = pytest.mark.postgres
WORKER = {"host": "test-host", "pid": 1, "task_id": "batch"}


def _preferences(agent, count: int, evidence) -> list[Proposal]:
    return [
        submit(
            agent.agent,
            create_payload(
                user_preference(content={"statement": f"prefers {n} of {count}", "preference_key": f"k{n}"}),
                evidence,
            ),
        )
        for n in range(count)
    ]


def _entry_ids(proposals) -> list:
    return list(OutboxEntry.objects.filter(proposal__in=proposals).values_list("id", flat=True))


def _poison(proposal: Proposal) -> None:
    """Make applying the proposal violate a check constraint, with its digests still consistent."""
    proposal.fields = {**proposal.fields, "confidence": 5}
    proposal.action_digest = proposal.compute_action_digest()
    proposal.verdict_seal = proposal.compute_verdict_seal()  # as an operator holding the key would
    proposal.save(update_fields=["fields", "action_digest", "verdict_seal"])
    OutboxEntry.objects.filter(proposal=proposal).update(action_digest=proposal.action_digest)


def test_a_batch_applies_every_entry_once_with_a_verifiable_chain(agent):
    evidence = [make_evidence(agent.agent), make_evidence(agent.agent)]
    proposals = _preferences(agent, 12, evidence)
    withdraw_proposal(agent=agent.agent, proposal=proposals[0])
    ids = _entry_ids(proposals)
    assert apply_entries(entry_ids=ids, worker=WORKER) == 12
    assert apply_entries(entry_ids=ids, worker=WORKER) == 0  # a redelivered batch changes nothing
    outcomes = sorted(Receipt.objects.values_list("outcome", flat=True))
    assert outcomes == ["applied"] * 11 + ["withdrawn"]
    assert Memory.objects.count() == 11
    assert all(memory.evidence_links.count() == 2 for memory in Memory.objects.all())
    assert set(Proposal.objects.values_list("status", flat=True)) == {"applied", "withdrawn"}
    assert Memory.history.filter(history_change_reason__startswith="receipt:").count() == 11
    call_command("verify_receipts")


def test_queries_per_batch_do_not_grow_with_its_size(agent):
    evidence = [make_evidence(agent.agent), make_evidence(agent.agent)]
    small, large = _entry_ids(_preferences(agent, 3, evidence)), _entry_ids(_preferences(agent, 30, evidence))
    with CaptureQueriesContext(connection) as few:
        apply_entries(entry_ids=small, worker=WORKER)
    with CaptureQueriesContext(connection) as many:
        apply_entries(entry_ids=large, worker=WORKER)
    assert len(many) == len(few)
    assert Receipt.objects.filter(outcome="applied").count() == 33


def test_a_poison_entry_fails_alone_and_the_rest_of_its_batch_applies(agent):
    evidence = [make_evidence(agent.agent)]
    proposals = _preferences(agent, 5, evidence)
    _poison(proposals[2])
    assert apply_entries(entry_ids=_entry_ids(proposals), worker=WORKER) == 4
    poisoned = OutboxEntry.objects.get(proposal=proposals[2])
    assert poisoned.status == OutboxEntry.Status.PENDING and poisoned.attempts == 1
    assert "memory_confidence_0_1" in poisoned.last_error
    assert not Receipt.objects.filter(outbox_entry=poisoned).exists()
    assert not Memory.objects.filter(pk=proposals[2].target_id).exists()
    call_command("verify_receipts")


def test_a_second_change_to_a_memory_in_the_same_batch_waits_for_the_first(agent):
    evidence = [make_evidence(agent.agent)]
    (created,) = _preferences(agent, 1, evidence)
    apply_entries(entry_ids=_entry_ids([created]), worker=WORKER)
    memory = Memory.objects.get(pk=created.target_id)
    updates = [
        submit(
            agent.agent,
            {
                "action": "update",
                "memory_id": str(memory.pk),
                "base_revision": 1,
                "changes": {"content": {"statement": f"now {n}", "preference_key": "k0"}},
                "evidence": [evidence[0].binding()],
                "policy_context": create_payload(user_preference(), evidence)["policy_context"],
            },
        )
        for n in range(2)
    ]
    apply_entries(entry_ids=_entry_ids(updates), worker=WORKER)
    outcomes = sorted(Receipt.objects.filter(proposal__in=updates).values_list("outcome", flat=True))
    assert outcomes == ["applied", "stale"]  # compare-and-swap on revision 1 lets exactly one through
    assert Memory.objects.get(pk=memory.pk).revision == 2


def test_the_sweep_keeps_at_most_max_in_flight_entries_leased(agent, settings):
    settings.CUSTODIAN_OUTBOX_MAX_IN_FLIGHT = 4
    settings.CUSTODIAN_OUTBOX_SWEEP_BATCH = 3
    _preferences(agent, 6, [make_evidence(agent.agent)])
    assert len(lease_for_sweep()) == 3
    assert len(lease_for_sweep()) == 1
    assert lease_for_sweep() == []


@pytest.mark.django_db(transaction=True)
def test_a_leased_entry_locked_for_an_instant_elsewhere_is_still_claimed(agent):
    """Another worker's lease scan may hold a row lock for an instant; the claim waits, never strands it."""
    _preferences(agent, 3, [make_evidence(agent.agent)])
    ids = lease_due_entries(limit=10)
    held, release = threading.Event(), threading.Event()

    def hold_one_row():
        with transaction.atomic():
            list(OutboxEntry.objects.select_for_update().filter(pk=ids[0]))
            held.set()
            release.wait(10)
        connection.close()

    holder = threading.Thread(target=hold_one_row)
    holder.start()
    assert held.wait(10)
    threading.Timer(0.5, release.set).start()
    assert apply_entries(entry_ids=ids, worker=WORKER) == 3
    holder.join()
    assert not OutboxEntry.objects.exclude(status=OutboxEntry.Status.DONE).exists()
