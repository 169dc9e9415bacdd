"""Scenario 4: a poison entry (its application always raises) is dead-lettered after
CUSTODIAN_OUTBOX_MAX_ATTEMPTS attempts while the other proposals keep flowing; requeueing it
hands a successor to the executor and the dead entry gets a ``requeued`` receipt.

The poison: a released proposal whose frozen ``fields`` say ``confidence: 5`` (with the
proposal's and the entry's ``action_digest`` recomputed, so the digest check passes); writing
the memory violates the ``memory_confidence_0_1`` check constraint, every time.
"""

import time

import pytest

from tests.faults.harness import assert_applied_exactly_once, scaled, wait_until

pytestmark = pytest.mark.faults

MAX_ATTEMPTS = 3
BEFORE, AFTER = scaled(20, 200), scaled(40, 400)


def _entries(stack, where: str, params: tuple) -> list[dict]:
    rows = stack.rows(
        "SELECT e.id::text, e.status, e.attempts, e.last_error, e.requeued_from_id::text, r.outcome, r.reason"
        " FROM proposals_outboxentry e LEFT JOIN executor_receipt r ON r.outbox_entry_id = e.id"
        f" WHERE {where} ORDER BY e.created_at",
        params,
    )
    keys = ("id", "status", "attempts", "last_error", "requeued_from", "receipt", "receipt_reason")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def _entry(stack, entry_id: str) -> dict:
    (entry,) = _entries(stack, "e.id = %s", (entry_id,))
    return entry


def _wait_for_status(stack, entry_id: str, status: str, what: str) -> dict:
    wait_until(lambda: _entry(stack, entry_id)["status"] == status, timeout=90, interval=0.25, what=what)
    return _entry(stack, entry_id)


def _poison_and_wait_until_dead(stack, started: float) -> tuple[str, dict, float]:
    poison = stack.helper("poison")["proposal_id"]
    (entry,) = _entries(stack, "e.proposal_id = %s", (poison,))
    dead = _wait_for_status(stack, entry["id"], "dead", "the poison entry to be dead-lettered")
    assert dead["attempts"] == MAX_ATTEMPTS, dead
    assert "IntegrityError" in dead["last_error"] and "memory_confidence_0_1" in dead["last_error"], dead
    assert dead["receipt"] is None, dead
    return poison, dead, time.monotonic() - started


def _assert_nothing_written(stack, poison: str) -> None:
    assert stack.scalar("SELECT status FROM proposals_proposal WHERE id = %s", (poison,)) == "released"
    memory_id = stack.scalar("SELECT target_memory_id FROM proposals_proposal WHERE id = %s", (poison,))
    assert stack.scalar("SELECT count(*) FROM memory_core_memory WHERE id = %s", (memory_id,)) == 0
    assert stack.scalar("SELECT count(*) FROM memory_core_historicalmemory WHERE id = %s", (memory_id,)) == 0


def test_poison_entry_is_dead_lettered_while_others_flow_and_requeued_once_cured(make_stack):
    stack = make_stack(max_attempts=MAX_ATTEMPTS)
    stack.helper("setup")
    started = time.monotonic()
    worker = stack.worker()
    stack.helper("submit", "--count", str(BEFORE), "--tag", "before")
    poison = stack.helper("poison")["proposal_id"]
    (entry,) = _entries(stack, "e.proposal_id = %s", (poison,))
    wait_until(
        lambda: _entry(stack, entry["id"])["last_error"],
        timeout=60,
        what="the poison entry's first failed attempt",
    )
    first_failure = time.monotonic() - started
    # Submitted while the poison entry is failing and backing off: these must not wait behind it.
    stack.helper("submit", "--count", str(AFTER), "--tag", "after")
    stack.wait_for_receipts(BEFORE + AFTER, timeout=120)
    others_done = time.monotonic() - started

    dead = _wait_for_status(stack, entry["id"], "dead", "the poison entry to be dead-lettered")
    dead_at = time.monotonic() - started
    assert dead["attempts"] == MAX_ATTEMPTS, dead
    assert "IntegrityError" in dead["last_error"] and "memory_confidence_0_1" in dead["last_error"], dead
    assert dead["receipt"] is None, dead
    _assert_nothing_written(stack, poison)

    # The operator fixes the cause, then requeues from the admin (requeue_dead_entry).
    stack.helper("set-confidence", "--proposal", poison, "--value", "0.9")
    requeued = stack.helper("requeue", "--proposal", poison)
    assert requeued["dead_entry_id"] == dead["id"]
    successor = _wait_for_status(stack, requeued["successor_id"], "done", "the successor to be applied")
    dead = _entry(stack, dead["id"])
    assert dead["receipt"] == "requeued", dead
    assert requeued["successor_id"] in dead["receipt_reason"] and dead["status"] == "done", dead
    assert successor["requeued_from"] == dead["id"] and successor["receipt"] == "applied", successor
    assert stack.scalar("SELECT status FROM proposals_proposal WHERE id = %s", (poison,)) == "applied"
    worker.stop()

    numbers = assert_applied_exactly_once(stack, expected=BEFORE + AFTER, ignore_proposals=(poison,))
    memory = stack.rows(
        "SELECT m.revision, m.confidence,"
        " (SELECT count(*) FROM memory_core_historicalmemory h WHERE h.id = m.id)"
        " FROM memory_core_memory m JOIN proposals_proposal p ON p.target_memory_id = m.id WHERE p.id = %s",
        (poison,),
    )
    assert memory == [(1, 0.9, 1)], memory
    verified = stack.verify_receipts()
    print(
        f"\n[faults] scenario 4 (poison entry): {BEFORE + AFTER} other proposals applied by"
        f" {others_done:.1f}s (first poison failure at {first_failure:.1f}s, {AFTER} submitted after it);"
        f" poison dead after {dead['attempts']} attempts at {dead_at:.1f}s; cured and requeued: the dead"
        f" entry got a 'requeued' receipt, the successor an 'applied' one after {successor['attempts']}"
        f" attempt(s), total {time.monotonic() - started:.1f}s; others retried: {numbers['retried_entries']};"
        f" verify_receipts: {verified}"
    )


def test_requeue_writes_the_requeued_receipt_even_if_the_successor_fails_again(make_stack):
    """Every dead entry that was requeued must end with its ``requeued`` receipt.

    The executor writes that receipt when it claims the successor, in the claim's own
    transaction, not in the one that applies the successor: while the cause persists the
    application rolls back, and a receipt written there would go with it, leaving the first dead
    entry with no receipt once its successor is dead and requeued in turn.
    """
    stack = make_stack(max_attempts=MAX_ATTEMPTS)
    stack.helper("setup")
    started = time.monotonic()
    worker = stack.worker()
    poison, dead, dead_at = _poison_and_wait_until_dead(stack, started)

    # Requeued while the cause persists: the successor fails MAX_ATTEMPTS times in turn.
    first = stack.helper("requeue", "--proposal", poison)
    successor = _wait_for_status(
        stack, first["successor_id"], "dead", "the first successor to be dead-lettered"
    )
    assert successor["attempts"] == MAX_ATTEMPTS, successor
    _assert_nothing_written(stack, poison)
    after_first_requeue = _entry(stack, dead["id"])

    # Now the cause is fixed and the dead successor is requeued: the proposal finally applies.
    stack.helper("set-confidence", "--proposal", poison, "--value", "0.9")
    second = stack.helper("requeue", "--proposal", poison)
    _wait_for_status(stack, second["successor_id"], "done", "the second successor to be applied")
    worker.stop()
    assert stack.scalar("SELECT status FROM proposals_proposal WHERE id = %s", (poison,)) == "applied"
    verified = stack.verify_receipts()

    entries = _entries(stack, "e.proposal_id = %s", (poison,))
    summary = [(e["id"][:8], e["status"], e["attempts"], e["receipt"]) for e in entries]
    print(
        f"\n[faults] scenario 4b (requeue of a still-failing entry): poison dead at {dead_at:.1f}s;"
        f" entries (id, status, attempts, receipt): {summary}; after the first requeue the dead entry was"
        f" {after_first_requeue['status']} with receipt {after_first_requeue['receipt']};"
        f" verify_receipts: {verified}; {time.monotonic() - started:.1f}s"
    )
    assert [e["receipt"] for e in entries] == ["requeued", "requeued", "applied"], (
        f"every requeued dead entry needs its 'requeued' receipt and no entry may stay dead: {summary}"
    )
    assert after_first_requeue["receipt"] == "requeued", (
        f"the first requeue left no receipt while the successor kept failing: {after_first_requeue}"
    )
