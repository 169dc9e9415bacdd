"""Executor drain: apply a backlog of released auto-apply proposals with 1, 2 and 4 workers.

The backlog sits in one tenant, then spread evenly over four: workers claim entries of any
tenant, but each tenant's receipts form one hash chain whose head an applying batch locks,
so one tenant's backlog and four tenants' show what that lock costs when workers are added.
"""

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
    """``workers_N`` for one tenant (the target's), ``tenants_4.workers_N`` for four."""
    results: dict = {}
    for tenants in ctx.scale.drain_tenants:
        into = results if tenants == 1 else results.setdefault(f"tenants_{tenants}", {})
        for workers in ctx.scale.drain_workers:
            runs = [_run(ctx, workers, tenants, attempt) for attempt in range(ctx.scale.repeats)]
            rates = sorted(r["applies_per_second"] for r in runs)
            into[f"workers_{workers}"] = {"applies_per_second": rates[len(rates) // 2], "runs": runs}
    return results


def _run(ctx: Context, workers: int, tenants: int, attempt: int) -> dict:
    suffix = "" if tenants == 1 else f"-of-{tenants}"
    worlds = [make_world(f"bench-drain-{workers}-{attempt}{suffix}-{n}") for n in range(tenants)]
    count = ctx.scale.drain_backlog - ctx.scale.drain_backlog % tenants
    ids = []
    with ctx.progress(count, f"seed backlog ({workers} worker, {tenants} tenant)") as bar:
        for n, world in enumerate(worlds):
            ids += seed_released_backlog(
                tenant=world.tenant,
                agent=world.agent,
                evidence=world.evidence,
                count=count // tenants,
                text=TextGenerator(seed=attempt * 10 + n),
                progress=bar.update,
            )
    # Hold the backlog back until the workers are up, so the clock times applying, not booting.
    OutboxEntry.objects.filter(pk__in=ids).update(available_at=timezone.now() + NOT_YET)
    ctx.stack.start_workers(workers)
    tenant_ids = [world.tenant.pk for world in worlds]
    try:
        ctx.stack.wait_until_workers_ready()
        started = time.perf_counter()
        OutboxEntry.objects.filter(pk__in=ids).update(available_at=timezone.now())
        with ctx.progress(count, f"drain ({workers} worker, {tenants} tenant)") as bar:
            done = 0
            while done < count:
                time.sleep(0.1)
                now_done = OutboxEntry.objects.filter(tenant_id__in=tenant_ids, status="done").count()
                bar.update(now_done - done)
                done = now_done
                if time.perf_counter() - started > 3600:
                    raise RuntimeError(f"drain stalled at {done}/{count}")
        seconds = time.perf_counter() - started
    finally:
        ctx.stack.stop_workers()
    outcomes = dict(
        Receipt.objects.filter(tenant_id__in=tenant_ids).values_list("outcome").annotate(n=Count("id"))
    )
    return {
        "backlog": count,
        "tenants": tenants,
        "seconds": round(seconds, 2),
        "applies_per_second": round(count / seconds, 1),
        "outcomes": outcomes,
    }
