"""Submit: auto-apply proposals citing two evidence revisions, 1 and 8 concurrent clients, and batched."""

import time
from concurrent.futures import ThreadPoolExecutor

from bench.client import ApiClient
from bench.context import Context, next_number
from bench.stats import Run, over_runs
from bench.world import make_world, preference_payload
from proposals.models import OutboxEntry


def run(ctx: Context) -> dict:
    world = make_world("bench-submit")
    ctx.stack.start_workers(1)  # production-like: the executor applies while agents submit
    try:
        results = {
            f"clients_{clients}": over_runs(
                [_run(ctx, world, clients, requests) for _ in range(ctx.scale.repeats)]
            )
            for clients, requests in ((1, ctx.scale.submit_requests_1), (8, ctx.scale.submit_requests_8))
        }
        results["batch"] = [_run_batches(ctx, world) for _ in range(ctx.scale.repeats)]
        # What the executor had not applied when submitting stopped must not leak into the next part.
        started = time.perf_counter()
        results["executor_backlog_at_end"] = wait_for_outbox(world.tenant)
        results["executor_catch_up_seconds"] = round(time.perf_counter() - started, 2)
        return results
    finally:
        ctx.stack.stop_workers()


def wait_for_outbox(tenant, timeout: float = 1800) -> int:
    """Wait until every outbox entry of ``tenant`` is finished; return how many were open at first."""
    open_entries = OutboxEntry.objects.filter(tenant=tenant).exclude(status__in=["done", "dead"])
    first = open_entries.count()
    deadline = time.monotonic() + timeout
    while open_entries.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the executor did not catch up with {tenant.name} in {timeout} s")
        time.sleep(0.2)
    return first


BATCH_SIZE = 500


def _run_batches(ctx: Context, world) -> dict:
    """One client sends ``batch_proposals`` in batches of 500; proposals accepted per second."""
    client = ApiClient("127.0.0.1", ctx.stack.port, world.token)
    accepted = errors = 0
    batch_seconds = []
    bar = ctx.progress(ctx.scale.batch_proposals, f"submit batches of {BATCH_SIZE}")
    started = time.perf_counter()
    remaining = ctx.scale.batch_proposals
    while remaining > 0:
        numbers = [next_number() for _ in range(min(BATCH_SIZE, remaining))]
        remaining -= len(numbers)
        items = [{"idempotency_key": f"sb{n}", "proposal": preference_payload(world, n)} for n in numbers]
        status, body, seconds = client.request("POST", "/api/v1/proposals/batch", {"items": items})
        batch_seconds.append(seconds)
        created = body["created"] if status == 200 else 0
        accepted += created
        errors += len(numbers) - created
        bar.update(len(numbers))
    wall = time.perf_counter() - started
    bar.close()
    return {
        "proposals": accepted,
        "errors": errors,
        "proposals_per_second": round(accepted / wall, 1) if wall else 0,
        "batch_seconds_max": round(max(batch_seconds), 3),
    }


def _run(ctx: Context, world, clients: int, requests: int) -> Run:
    result = Run()
    per_client = requests // clients
    progress = ctx.progress(per_client * clients, f"submit x{clients}")

    def client_loop(_):
        client = ApiClient("127.0.0.1", ctx.stack.port, world.token)
        latencies, errors = [], 0
        for _ in range(per_client):
            n = next_number()
            status, body, seconds = client.request(
                "POST",
                "/api/v1/proposals/",
                preference_payload(world, n),
                headers={"Idempotency-Key": f"s{n}"},
            )
            if status == 201 and body["classification"] == "auto_apply":
                latencies.append(seconds)
            else:
                errors += 1
            progress.update()
        return latencies, errors

    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        for latencies, errors in pool.map(client_loop, range(clients)):
            result.latencies += latencies
            result.errors += errors
    result.wall_seconds = time.perf_counter() - started
    progress.close()
    return result
