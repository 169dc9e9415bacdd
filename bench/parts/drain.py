"""Executor drain: apply a backlog of released auto-apply proposals with 1 and 2 workers."""

import time
from datetime import timedelta

from django.db.models import Count
from django.utils import timezone

from bench.context import Context
from bench.seed import seed_released_backlog
from bench.textgen import TextGenerator
from bench.world import make_world
from executor.models import Receipt
from proposals.models import OutboxEntry

NOT_YET = timedelta(days=365)


def run(ctx: Context) -> dict:
    results = {}
    for workers in (1, 2):
        runs = [_run(ctx, workers, attempt) for attempt in range(ctx.scale.repeats)]
        rates = sorted(r["applies_per_second"] for r in runs)
        results[f"workers_{workers}"] = {"applies_per_second": rates[len(rates) // 2], "runs": runs}
    return results


def _run(ctx: Context, workers: int, attempt: int) -> dict:
    world = make_world(f"bench-drain-{workers}-{attempt}")
    count = ctx.scale.drain_backlog
    with ctx.progress(count, f"seed backlog ({workers} worker)") as bar:
        ids = seed_released_backlog(
            tenant=world.tenant,
            agent=world.agent,
            evidence=world.evidence,
            count=count,
            text=TextGenerator(seed=attempt),
            progress=bar.update,
        )
    # Hold the backlog back until the workers are up, so the clock times applying, not booting.
    OutboxEntry.objects.filter(pk__in=ids).update(available_at=timezone.now() + NOT_YET)
    ctx.stack.start_workers(workers)
    try:
        ctx.stack.wait_until_workers_ready()
        started = time.perf_counter()
        OutboxEntry.objects.filter(pk__in=ids).update(available_at=timezone.now())
        with ctx.progress(count, f"drain ({workers} worker)") as bar:
            done = 0
            while done < count:
                time.sleep(0.1)
                now_done = OutboxEntry.objects.filter(tenant=world.tenant, status="done").count()
                bar.update(now_done - done)
                done = now_done
                if time.perf_counter() - started > 3600:
                    raise RuntimeError(f"drain stalled at {done}/{count}")
        seconds = time.perf_counter() - started
    finally:
        ctx.stack.stop_workers()
    outcomes = dict(
        Receipt.objects.filter(tenant=world.tenant).values_list("outcome").annotate(n=Count("id"))
    )
    return {
        "backlog": count,
        "seconds": round(seconds, 2),
        "applies_per_second": round(count / seconds, 1),
        "outcomes": outcomes,
    }
