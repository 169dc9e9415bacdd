"""Scenario 2: Redis is killed mid-run and comes back empty (every broker message lost);
the beat sweep re-dispatches what the outbox still holds, and the web API does not depend on it.

The outbox lease is an hour in the restart scenario: no entry may sit under a lease in a message
Redis lost (the sweep nudges instead of leasing), so the drain never waits for one to run out; the
output reports, for every entry unfinished when Redis came back, the time to its receipt.
"""

import random
import time

import pytest

from tests.faults.harness import assert_applied_exactly_once, http, lag_summary, scaled, wait_until

pytestmark = pytest.mark.faults

# Enough that the drain is still running when Redis dies: coalesced nudges fanning out to both pool
# processes apply batches of 100 at ~500 entries/s, so 200 were all applied before the first kill.
PROPOSALS = scaled(1000, 2000)
RESTARTS = scaled(1, 3)
LEASE_SECONDS = 3600
# A pool process whose Django connection was left inside ``transaction.atomic`` when Celery
# SIGTERMed it on the broker connection loss; every task it takes afterwards fails with this.
STUCK_POOL_PROCESS = "Cannot open a new connection in an atomic block"


class SupervisedWorker:
    """Restart the worker when it exits, as systemd or supervisord would (``bin/run-all`` does too).

    kombu 5.7's Redis transport can exit the worker while restoring unacked
    messages after the broker vanished ('NoneType' object has no attribute
    'hostname'); the outbox loses nothing, the worker just has to come back.
    """

    def __init__(self, stack):
        self.stack, self.worker, self.restarts = stack, stack.worker(), 0

    def keep_alive(self) -> None:
        if not self.worker.running:
            self.restarts += 1
            self.worker = self.stack.worker()

    def stop(self) -> None:
        self.worker.stop()


def _stuck_pool(stack) -> str:
    """Describe a pool process that can no longer make progress ('' while healthy)."""
    stuck = stack.log_count("worker.log", STUCK_POOL_PROCESS)
    if stuck >= 3:
        return (
            f"a worker pool process has its database connection stuck in an atomic block;"
            f" it has failed {stuck} tasks since with {STUCK_POOL_PROCESS!r}"
        )
    return ""


def _wait_for_receipts(stack, supervised, count: int, timeout: float, what: str) -> None:
    def progressed() -> bool:
        supervised.keep_alive()
        trouble = _stuck_pool(stack)
        if trouble:
            pytest.fail(f"{what}: {trouble}")
        return stack.receipts() >= count

    wait_until(progressed, timeout=timeout, interval=0.25, what=what)


def test_redis_restarted_empty_mid_run_loses_nothing(make_stack):
    stack = make_stack(max_attempts=25, lease_seconds=LEASE_SECONDS)
    stack.helper("setup")
    created = stack.helper("submit", "--count", str(PROPOSALS), "--tag", "redis")
    queued = stack.redis.queue_length()
    print(f"\n[faults] {PROPOSALS} proposals submitted in {created['seconds']}s; {queued} nudges queued")
    assert 1 <= queued < PROPOSALS // 10  # coalesced: one message stands for every entry due until taken

    started = time.monotonic()
    worker = SupervisedWorker(stack)
    restarts = []
    for n in range(1, RESTARTS + 1):
        target = PROPOSALS * n // (RESTARTS + 2)
        _wait_for_receipts(stack, worker, target, 180, f"{target} receipts before Redis restart {n}")
        lost = stack.redis.queue_length()
        stack.redis.kill()
        killed_at = stack.receipts()
        down = random.uniform(1.0, 3.0)
        time.sleep(down)
        stack.redis.start()  # --save "" --appendonly no: it comes back with no messages at all
        # (no assertion on the queue here: beat's sweep may already be re-sending into it)
        back, at_restart = time.monotonic(), stack.receipts()
        back_at = stack.clock()
        unfinished = [
            entry
            for (entry,) in stack.rows("SELECT id::text FROM proposals_outboxentry WHERE status <> 'done'")
        ]
        _wait_for_receipts(stack, worker, at_restart + 1, 90, f"the first receipt after Redis restart {n}")
        restarts.append(
            f"#{n}: killed at {killed_at} receipts with {lost} messages queued, down {down:.1f}s,"
            f" first new receipt {time.monotonic() - back:.1f}s after restart"
        )
        restarted = (unfinished, back_at)

    _wait_for_receipts(stack, worker, PROPOSALS, scaled(240, 1200), f"all {PROPOSALS} receipts")
    lags = stack.receipt_lags(*restarted)  # of the last restart
    duration = time.monotonic() - started
    worker.stop()

    numbers = assert_applied_exactly_once(stack, expected=PROPOSALS)
    verified = stack.verify_receipts()
    print(
        f"[faults] scenario 2 (Redis restarted empty): {RESTARTS} restarts, {PROPOSALS} proposals,"
        f" drained in {duration:.1f}s; {'; '.join(restarts)};"
        f" {numbers['retried_entries']} entries retried (max attempts {numbers['max_attempts']});"
        f" {worker.restarts} worker restart(s) by the supervisor;"
        f" from the last restart to the receipt: {lag_summary(lags)};"
        f" verify_receipts: {verified}"
    )


def test_api_accepts_proposals_while_redis_is_down(make_stack):
    """Redis only carries nudges (the outbox is the truth), so a Redis outage must not take the API down.

    Submitting commits the proposal and its outbox row; the nudge fails quietly
    (``proposals.services.outbox.nudge``) and the sweep sends it once Redis is back.
    """
    stack = make_stack()
    token = stack.helper("setup")["token"]
    _web, port = stack.web()
    wait_until(
        lambda: _status(port, token) == 200, timeout=60, interval=0.3, what="the web server to answer 200"
    )
    evidence = http(
        port,
        "POST",
        "/api/v1/evidence/",
        token=token,
        body={"kind": "backtest_run", "external_ref": "redis-down", "content": {"ic_mean": 0.02}},
    )
    assert evidence[0] == 201, evidence
    revision = evidence[2]
    payload = {
        "action": "create",
        "memory": {
            "subject": {"kind": "user", "id": "pm-alice"},
            "scope": "user",
            "type": "preference",
            "content": {"statement": "Alice prefers weekly summaries, said while Redis was down"},
            "sensitivity": "internal",
        },
        "evidence": [{key: revision[key] for key in ("evidence_id", "revision", "content_hash")}],
        "policy_context": {
            "acting_for_subject": {"kind": "user", "id": "pm-alice"},
            "consent_basis": "explicit",
            "risk_level": "low",
        },
        "rationale": "said in chat",
    }
    stack.redis.kill()
    answers = {
        "GET /api/v1/proposals/": http(port, "GET", "/api/v1/proposals/", token=token),
        "POST /api/v1/proposals/": http(
            port,
            "POST",
            "/api/v1/proposals/",
            token=token,
            body=payload,
            headers={"Idempotency-Key": "redis-down"},
        ),
    }
    summary = {
        what: (status, body.get("code") if isinstance(body, dict) else body)
        for what, (status, _, body) in answers.items()
    }
    print(f"\n[faults] scenario 2b (API while Redis is down): {summary}")
    assert all(status < 500 for status, _ in summary.values()), (
        f"the API answers 5xx while only Redis is down: {summary}."
        f" Last traceback in web.log: {stack.last_traceback('web.log')}"
    )
    assert answers["POST /api/v1/proposals/"][0] == 201, summary
    assert answers["GET /api/v1/proposals/"][0] == 200, summary

    # Once Redis is back, the sweep applies what was accepted during the outage.
    stack.redis.start()
    worker = stack.worker()
    stack.wait_for_receipts(1, timeout=60)
    worker.stop()
    assert_applied_exactly_once(stack, expected=1)
    stack.verify_receipts()


def _status(port: int, token: str) -> int:
    try:
        return http(port, "GET", "/api/v1/proposals/", token=token)[0]
    except OSError:
        return 0
