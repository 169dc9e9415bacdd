"""Submit: auto-apply proposals citing two evidence revisions, 1 and 8 concurrent clients."""

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
