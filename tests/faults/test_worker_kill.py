"""Scenario 1: SIGKILL the executor worker (its whole process group, embedded beat included)
at random moments while it drains released auto-apply proposals, restarting it each time.

The outbox lease is an hour here: an entry the killed worker held must be taken over because its
holder is gone, never because a lease ran out. After each restart, every entry still unfinished at
the kill must have its receipt within ``RECOVERY_BOUND`` of the worker's return (a bound far above
any healthy recovery, far below the lease); the output reports those lags.
"""

import os
import random
import time

import pytest

from tests.faults.harness import assert_applied_exactly_once, lag_summary, scaled, wait_until

pytestmark = pytest.mark.faults

PROPOSALS = scaled(300, 3000)
KILLS = scaled(6, 30)
LEASE_SECONDS = 3600
RECOVERY_BOUND = 90
REFILL_BELOW = scaled(60, 300)  # fewer unapplied than this at a kill's turn: submit more first


def test_sigkilled_workers_apply_every_proposal_exactly_once(make_stack):
    seed = int(os.environ.get("CUSTODIAN_FAULT_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    # A kill costs an entry an attempt: never dead-letter here. Small batches, so that the
    # drain takes long enough for every kill to land mid-drain, inside or between batches.
    stack = make_stack(max_attempts=25, executor_batch=3, lease_seconds=LEASE_SECONDS)
    stack.helper("setup")
    created = stack.helper("submit", "--count", str(PROPOSALS), "--tag", "kill")
    print(f"\n[faults] seed {seed}: {PROPOSALS} proposals submitted in {created['seconds']}s")

    started = time.monotonic()
    worker = stack.worker()
    kills: list[tuple[int, str]] = []
    lags: list[float] = []
    submitted, refills = PROPOSALS, 0
    while len(kills) < KILLS:
        done = stack.receipts()
        remaining = submitted - done
        if remaining < REFILL_BELOW:
            # Recovering the last kill's entries let the worker drain most of the backlog (how
            # fast depends on the machine): top it up, so every kill still lands mid-drain.
            refills += 1
            stack.helper("submit", "--count", str(PROPOSALS // 2), "--tag", f"kill-refill-{refills}")
            submitted += PROPOSALS // 2
            continue
        if rng.random() < 0.25:
            # Kill while the worker boots or takes its first messages (before it has applied anything).
            time.sleep(rng.uniform(0.3, 2.5))
            moment = "during start-up"
        else:
            # Kill after a random amount of progress, spread so that every kill lands mid-drain.
            budget = max(1, (remaining - REFILL_BELOW // 2) // (KILLS - len(kills) + 1))
            target = done + rng.randint(1, budget)
            wait_until(
                lambda target=target: stack.receipts() >= target,
                timeout=120,
                interval=0.02,
                what=f"{target} receipts before kill {len(kills) + 1}",
            )
            time.sleep(rng.uniform(0, 0.05))
            moment = "mid-drain"
        worker.kill()
        kills.append((stack.receipts(), moment))
        held = _dispatched(stack)
        back = stack.clock()
        worker = stack.worker()
        stack.wait_for_entries(
            held,
            timeout=RECOVERY_BOUND,
            what=f"the {len(held)} entries leased when kill {len(kills)} landed (lease {LEASE_SECONDS}s)",
        )
        lags += stack.receipt_lags(held, back)

    stack.wait_for_receipts(submitted, timeout=scaled(240, 1500))
    duration = time.monotonic() - started
    worker.stop()

    numbers = assert_applied_exactly_once(stack, expected=submitted)
    verified = stack.verify_receipts()
    print(
        f"[faults] scenario 1 (worker SIGKILL): {len(kills)} kills, {submitted} proposals"
        f" ({refills} top-ups), drained in"
        f" {duration:.1f}s; receipts at each kill {[k for k, _ in kills]};"
        f" {sum(m == 'during start-up' for _, m in kills)} kills during start-up;"
        f" {numbers['retried_entries']} entries needed more than one attempt (max {numbers['max_attempts']});"
        f" entries leased at a kill, from the restart to their receipt: {lag_summary(lags)};"
        f" verify_receipts: {verified}"
    )


def _dispatched(stack) -> list[str]:
    """The entries under a lease: the ones a killed worker may have held."""
    rows = stack.rows("SELECT id::text FROM proposals_outboxentry WHERE status = 'dispatched'")
    return [entry for (entry,) in rows]
