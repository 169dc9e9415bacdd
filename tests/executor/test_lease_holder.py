"""A lease is held by a live worker connection: once the database ends that connection, its entries
are taken over at once, however long the lease had left; a live holder keeps them."""

import threading

import pytest
from django.db import connection

from executor.leases import reclaim_orphaned
from executor.models import Receipt
from executor.services import apply_entries, lease_due_entries, sweep_outbox
from proposals.models import OutboxEntry
from tests.factories import create_payload, make_evidence, submit, user_preference
from tests.faults.harness import wait_until
from tests.workers import broker_messages, connect_as, empty_broker

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
WORKER = {"host": "test-host", "pid": 1, "task_id": "lease"}


@pytest.fixture(autouse=True)
def hour_long_lease(settings):
    settings.CUSTODIAN_OUTBOX_LEASE_SECONDS = 3600


def _entries(agent, count: int) -> list:
    evidence = [make_evidence(agent.agent)]
    for n in range(count):
        content = {"statement": f"prefers {n}", "preference_key": f"lease{n}"}
        submit(agent.agent, create_payload(user_preference(content=content), evidence))
    return sorted(OutboxEntry.objects.values_list("id", flat=True))


def _lease_in_another_connection(*, then_close: bool, hold: threading.Event | None = None) -> list:
    """Lease every due entry on a connection of its own (a worker's), then close it or keep it open."""
    leased: list = []

    def worker() -> None:
        leased.extend(lease_due_entries(limit=100))
        if hold is not None:
            hold.wait(30)
        if then_close:
            connection.close()

    thread = threading.Thread(target=worker)
    thread.start()
    if hold is None:
        thread.join()
    else:
        wait_until(lambda: leased, timeout=30, what="the other connection's lease")
    return sorted(leased)


def test_entries_whose_holder_connection_closed_are_taken_over_before_their_lease_expires(agent):
    ids = _entries(agent, 3)
    assert _lease_in_another_connection(then_close=True) == ids
    assert lease_due_entries(limit=100) == []  # leased for an hour
    # The backend exits right after its client leaves; the takeover needs no lease to run out.
    wait_until(lambda: reclaim_orphaned(), timeout=30, what="the dead holder's entries to be reclaimed")
    assert set(OutboxEntry.objects.values_list("status", flat=True)) == {OutboxEntry.Status.PENDING}
    assert sorted(lease_due_entries(limit=100)) == ids
    assert apply_entries(entry_ids=ids, worker=WORKER) == 3
    assert Receipt.objects.filter(outcome="applied").count() == 3


def test_entries_held_by_a_live_connection_stay_with_it(agent):
    ids = _entries(agent, 2)
    release = threading.Event()
    try:
        assert _lease_in_another_connection(then_close=True, hold=release) == ids
        assert reclaim_orphaned() == 0
        assert lease_due_entries(limit=100) == []
        assert set(OutboxEntry.objects.values_list("status", flat=True)) == {OutboxEntry.Status.DISPATCHED}
    finally:
        release.set()


def test_a_live_holder_idle_past_the_bound_is_taken_over(agent, settings):
    """A worker whose task ended between lease and apply keeps its connection open, working on nothing."""
    settings.CUSTODIAN_OUTBOX_IDLE_HOLDER_SECONDS = 1
    ids = _entries(agent, 2)
    release = threading.Event()
    try:
        assert _lease_in_another_connection(then_close=True, hold=release) == ids
        wait_until(lambda: reclaim_orphaned(), timeout=30, what="the idle holder's entries to be reclaimed")
        assert sorted(lease_due_entries(limit=100)) == ids
    finally:
        release.set()


def test_a_worker_that_lost_the_database_records_nothing_against_its_entries_and_gives_them_back(agent):
    ids = _entries(agent, 2)
    assert sorted(lease_due_entries(limit=100)) == ids  # held by this connection
    with connect_as() as admin:  # the database ends this worker's session under it
        admin.execute("SELECT pg_terminate_backend(%s)", (connection.connection.info.backend_pid,))
    assert apply_entries(entry_ids=ids, worker=WORKER) == 0
    entries = list(OutboxEntry.objects.values_list("status", "attempts", "last_error"))
    assert entries == [(OutboxEntry.Status.PENDING, 0, "")] * 2  # due at once: no backoff, no failure
    assert sorted(lease_due_entries(limit=100)) == ids
    assert apply_entries(entry_ids=ids, worker=WORKER) == 2


@pytest.mark.services
def test_the_coalesced_sweep_leases_nothing_and_publishes_one_nudge(agent, settings):
    """No entry waits under a lease in a message a dead worker or an emptied Redis may have lost."""
    assert settings.CUSTODIAN_NUDGE_COALESCE
    _entries(agent, 3)
    empty_broker()  # the submits' own nudges
    try:
        assert sweep_outbox() == []
        assert set(OutboxEntry.objects.values_list("status", flat=True)) == {OutboxEntry.Status.PENDING}
        messages = broker_messages()
        assert [m["headers"]["argsrepr"] for m in messages] == ["()"], messages  # "apply what is due"
    finally:
        empty_broker()
