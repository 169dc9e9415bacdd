"""Scenario 5: the web process dies between the proposal's COMMIT and the on-commit nudge.

The helper opens ``transaction.atomic()``, registers ``on_commit(os._exit(137))`` first, then
calls the non-durable ``proposals.services.submission.create_proposal`` (whose release registers the
executor's nudge after ours): the process exits after COMMIT and before any broker message.
The beat sweep alone must then get the proposal executed.
"""

import time

import pytest

from tests.faults.harness import assert_applied_exactly_once, scaled

pytestmark = pytest.mark.faults

CRASHES = scaled(3, 20)


def test_proposal_committed_by_a_process_that_died_before_the_nudge_is_still_executed(make_stack):
    stack = make_stack()
    stack.helper("setup")
    redis = stack.redis.client()
    crashed = []
    for _ in range(CRASHES):
        answer = stack.helper("crash-before-nudge", expect_exit=137)
        assert answer.get("status") == "released", answer
        crashed.append(answer["proposal_id"])
    # Committed, released, with a pending outbox row, and nothing ever reached the broker.
    statuses = stack.rows(
        "SELECT p.status, e.status, e.attempts FROM proposals_proposal p"
        " JOIN proposals_outboxentry e ON e.proposal_id = p.id WHERE p.id::text = ANY(%s)",
        (crashed,),
    )
    assert sorted(statuses) == [("released", "pending", 0)] * CRASHES, statuses
    assert redis.dbsize() == 0, f"a nudge reached Redis after all: {redis.keys('*')}"

    # Control: a submission that survives its commit does nudge this very Redis.
    stack.helper("submit", "--count", "1", "--tag", "control")
    assert stack.redis.queue_length() == 1

    started = time.monotonic()
    redis.flushall()  # only the sweep can find them now
    worker = stack.worker(beat=True)
    stack.wait_for_receipts(CRASHES + 1, timeout=90)
    duration = time.monotonic() - started
    worker.stop()

    assert_applied_exactly_once(stack, expected=CRASHES + 1)
    verified = stack.verify_receipts()
    print(
        f"\n[faults] scenario 5 (crash between COMMIT and nudge): {CRASHES} submitting processes died"
        f" (exit 137) after COMMIT with no broker message; the sweep executed all {CRASHES + 1} proposals"
        f" {duration:.1f}s after a worker with beat started; verify_receipts: {verified}"
    )
