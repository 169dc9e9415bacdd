"""Scenario 3: PostgreSQL restarts (``pg_ctl stop -m fast``, then start) mid-run.

Workers recover on their own; while the database is down the web API answers
503 ``application/problem+json`` with code ``service_unavailable``, never a
traceback or a 500.
"""

import random
import time

import pytest

from tests.faults.harness import assert_applied_exactly_once, http, scaled, wait_until

pytestmark = pytest.mark.faults

PROPOSALS = scaled(200, 2000)
RESTARTS = scaled(1, 3)


def _assert_service_unavailable(status, content_type, body, what):
    assert status == 503, f"{what} while PostgreSQL is down: {status} {content_type} {str(body)[:2000]}"
    assert content_type.startswith("application/problem+json"), f"{what}: content type {content_type}"
    assert isinstance(body, dict), f"{what}: body is not JSON: {str(body)[:2000]}"
    assert body["code"] == "service_unavailable", body
    assert body["status"] == 503, body
    assert "Traceback" not in str(body), body


def test_postgres_restart_mid_run_recovers_and_the_api_answers_503(make_stack):
    stack = make_stack(max_attempts=25)
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
    for n in range(1, RESTARTS + 1):
        target = PROPOSALS * n // (RESTARTS + 2)
        wait_until(lambda target=target: stack.receipts() >= target, timeout=180, what=f"{target} receipts")
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
        wait_until(
            lambda at_restart=at_restart: stack.receipts() > at_restart,
            timeout=90,
            what="the first receipt after PostgreSQL came back",
        )
        restarts.append(
            f"#{n}: stopped at {at_restart} receipts, down {down_seconds:.1f}s,"
            f" first new receipt {time.monotonic() - back:.1f}s after restart"
        )
        assert worker.running and web.running

    stack.wait_for_receipts(PROPOSALS, timeout=scaled(240, 1200))
    duration = time.monotonic() - started
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
        f" (max attempts {numbers['max_attempts']}); verify_receipts: {verified}"
    )


def _get_status(port: int, token: str) -> int:
    try:
        return http(port, "GET", "/api/v1/proposals/", token=token)[0]
    except OSError:
        return 0
