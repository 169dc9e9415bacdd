"""The sweep leases due entries only, and reclaims entries whose lease expired."""

from datetime import timedelta

from django.utils import timezone

from executor.services import lease_due_entries
from proposals.models import OutboxEntry
from tests.factories import create_payload, make_evidence, submit, user_preference


def _entry(agent) -> OutboxEntry:
    proposal = submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    return OutboxEntry.objects.get(proposal=proposal)


def test_sweep_leases_due_pending_entries(agent):
    entry = _entry(agent)
    assert lease_due_entries(limit=10) == [entry.id]
    entry.refresh_from_db()
    assert entry.status == OutboxEntry.Status.DISPATCHED
    assert entry.lease_expires_at > timezone.now()
    assert lease_due_entries(limit=10) == []  # leased: not handed out twice


def test_sweep_waits_for_the_hold_window(agent):
    entry = _entry(agent)
    OutboxEntry.objects.filter(pk=entry.pk).update(available_at=timezone.now() + timedelta(minutes=5))
    assert lease_due_entries(limit=10) == []


def test_sweep_reclaims_an_expired_lease(agent):
    entry = _entry(agent)
    OutboxEntry.objects.filter(pk=entry.pk).update(
        status=OutboxEntry.Status.DISPATCHED, lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert lease_due_entries(limit=10) == [entry.id]


def test_sweep_never_touches_finished_entries(agent, applied_memory):
    assert OutboxEntry.objects.get().status == OutboxEntry.Status.DONE
    assert lease_due_entries(limit=10) == []


def test_sweep_respects_its_batch_limit(agent):
    for _ in range(3):
        _entry(agent)
    assert len(lease_due_entries(limit=2)) == 2
    assert len(lease_due_entries(limit=2)) == 1
