"""Scenario 3: PostgreSQL restarts (``pg_ctl stop -m fast``, then start) mid-run.

Workers recover on their own; while the database is down the web API answers
503 ``application/problem+json`` with code ``service_unavailable``, never a
traceback or a 500.

The outbox lease is an hour here: the entries a worker held when the database went away must be
taken over because the database ended their holder's session, never because a lease ran out.
Every entry leased when it stopped must have its receipt within ``RECOVERY_BOUND`` of the
database's return; the output reports the lags of those and of every entry unfinished then
(which, behind a backlog, includes the time to drain it).
"""

import random
import time
from typing import Any

import pytest

from tests.faults.harness import assert_applied_exactly_once, http, lag_summary, scaled, wait_until

pytestmark = pytest.mark.faults

PROPOSALS = scaled(200, 2000)
RESTARTS = scaled(1, 3)
LEASE_SECONDS = 3600
RECOVERY_BOUND = 90
BATCH = 10


def _assert_service_unavailable(status, content_type, body, what):
    assert status == 503, f"{what} while PostgreSQL is down: {status} {content_type} {str(body)[:2000]}"
    assert content_type.startswith("application/problem+json"), f"{what}: content type {content_type}"
    assert isinstance(body, dict), f"{what}: body is not JSON: {str(body)[:2000]}"
    assert body["code"] == "service_unavailable", body
    assert body["status"] == 503, body
    assert "Traceback" not in str(body), body


def test_postgres_restart_mid_run_recovers_and_the_api_answers_503(make_stack):
    # Small batches: a batch of 100 could take the whole backlog with it before the stop lands,
    # leaving nothing for the outage to interrupt.
    stack = make_stack(max_attempts=25, lease_seconds=LEASE_SECONDS, executor_batch=BATCH)
    token = stack.helper("setup")["token"]
    web, port = stack.web()
    wait_until(
        lambda: _get_status(port, token) == 200, timeout=60, interval=0.3, what="the web server to answer 200"
    )
    created = stack.helper("submit", "--count", str(PROPOSALS), "--tag", "pg")
    print(f"\n[faults] {PROPOSALS} proposals submitted in {created['seconds']}s")

    started = time.monotonic()
    worker = stack.worker()
    restarts, answered = [], 0
    held_lags: list[float] = []
    outages: list[tuple[Any, Any, list[str]]] = []  # (stopped, back, unfinished then), database clock
    for n in range(1, RESTARTS + 1):
        target = PROPOSALS * n // (RESTARTS + 2)
        wait_until(lambda target=target: stack.receipts() >= target, timeout=180, what=f"{target} receipts")
        held, stopped_at = _entries(stack, "status = 'dispatched'"), stack.clock()
        stack.pg.stop("fast")
        down_started = time.monotonic()
        down_for = random.uniform(3.0, 5.0)
        # While it is down: reads and a submission through the real web process.
        while time.monotonic() - down_started < down_for:
            _assert_service_unavailable(
                *http(port, "GET", "/api/v1/proposals/", token=token), "GET /api/v1/proposals/"
            )
            _assert_service_unavailable(
                *http(
                    port,
                    "POST",
                    "/api/v1/proposals/",
                    token=token,
                    body={"action": "create"},
                    headers={"Idempotency-Key": f"during-outage-{n}-{answered}"},
                ),
                "POST /api/v1/proposals/",
            )
            answered += 2
            time.sleep(0.2)
        stack.pg.start()
        back, down_seconds, at_restart = time.monotonic(), time.monotonic() - down_started, stack.receipts()
        back_at, unfinished = stack.clock(), _entries(stack, "status NOT IN ('done', 'dead')")
        assert unfinished, f"every entry was applied before the stop landed (batches of {BATCH})"
        wait_until(
            lambda at_restart=at_restart: stack.receipts() > at_restart,
            timeout=90,
            what=f"the first receipt after PostgreSQL came back ({len(unfinished)} entries unfinished)",
        )
        first = time.monotonic() - back
        stack.wait_for_entries(
            held,
            timeout=RECOVERY_BOUND,
            what=f"the {len(held)} entries leased when PostgreSQL stopped (lease {LEASE_SECONDS}s)",
        )
        held_lags += stack.receipt_lags([e for e in held if e in unfinished], back_at)
        outages.append((stopped_at, back_at, unfinished))
        restarts.append(
            f"#{n}: stopped at {at_restart} receipts, {len(held)} entries leased,"
            f" {len(unfinished)} unfinished, down {down_seconds:.1f}s,"
            f" first new receipt {first:.1f}s after restart"
        )
        assert worker.running and web.running

    stack.wait_for_receipts(PROPOSALS, timeout=scaled(240, 1200))
    duration = time.monotonic() - started
    unfinished_lags = [  # each receipt timed from the last return before it
        lag
        for (_, back_at, unfinished), after in zip(outages, [*outages[1:], None], strict=True)
        for lag in stack.receipt_lags(unfinished, back_at, after[0] if after else None)
    ]
    status, _, body = http(port, "GET", "/api/v1/proposals/?status=applied", token=token)
    assert status == 200, body  # the web process recovered on its own as well
    worker.stop()

    numbers = assert_applied_exactly_once(stack, expected=PROPOSALS)
    verified = stack.verify_receipts()
    failed_tasks = stack.log_count("worker.log", "OperationalError")
    print(
        f"[faults] scenario 3 (PostgreSQL restart): {RESTARTS} restarts, {PROPOSALS} proposals,"
        f" drained in {duration:.1f}s; {'; '.join(restarts)}; {answered} API requests during outages,"
        f" all 503 problem+json service_unavailable; {failed_tasks} OperationalError lines in the worker log;"
        f" {numbers['retried_entries']} entries retried"
        f" (max attempts {numbers['max_attempts']}); from PostgreSQL's return to the receipt:"
        f" entries leased at the stop {lag_summary(held_lags)}, every unfinished entry"
        f" {lag_summary(unfinished_lags)}; verify_receipts: {verified}"
    )


def _entries(stack, condition: str) -> list[str]:
    return [entry for (entry,) in stack.rows(f"SELECT id::text FROM proposals_outboxentry WHERE {condition}")]


def _get_status(port: int, token: str) -> int:
    try:
        return http(port, "GET", "/api/v1/proposals/", token=token)[0]
    except OSError:
        return 0
