"""End to end: submit an auto-apply proposal, poll until its receipt is visible to the agent."""

import time

from bench.client import ApiClient
from bench.context import Context, next_number
from bench.parts.submit import wait_for_outbox
from bench.stats import Run, over_runs
from bench.world import make_world, preference_payload

POLL_SECONDS = 0.005
GIVE_UP_SECONDS = 30


def run(ctx: Context) -> dict:
    world = make_world("bench-e2e")
    ctx.stack.start_workers(1)
    try:
        ctx.stack.wait_until_workers_ready()
        results = over_runs([_run(ctx, world) for _ in range(ctx.scale.repeats)])
        wait_for_outbox(world.tenant)
        return results
    finally:
        ctx.stack.stop_workers()


def _run(ctx: Context, world) -> Run:
    result = Run()
    client = ApiClient("127.0.0.1", ctx.stack.port, world.token)
    started = time.perf_counter()
    bar = ctx.progress(ctx.scale.e2e_requests, "submit→receipt")
    for _ in range(ctx.scale.e2e_requests):
        bar.update()
        n = next_number()
        began = time.perf_counter()
        status, body, _ = client.request(
            "POST", "/api/v1/proposals/", preference_payload(world, n), headers={"Idempotency-Key": f"e{n}"}
        )
        if status != 201:
            result.errors += 1
            continue
        while time.perf_counter() - began < GIVE_UP_SECONDS:
            status, receipts, _ = client.request("GET", f"/api/v1/receipts/?proposal={body['id']}")
            if status == 200 and receipts["results"]:
                result.latencies.append(time.perf_counter() - began)
                break
            time.sleep(POLL_SECONDS)
        else:
            result.errors += 1
    result.wall_seconds = time.perf_counter() - started
    bar.close()
    return result
