"""Review pages: render time and SQL query count of /review/ and a proposal page as the queue grows.

Pages are rendered in this process through Django's test client (server
time, no network), timed without query capture and counted with it; the
receipts admin changelist is measured the same way at each recall size.
"""

import time

from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from bench.context import Context
from bench.seed import seed_pending_proposals
from bench.stats import Run, over_runs
from bench.textgen import TextGenerator
from bench.world import make_world
from proposals.models import Proposal

SMALL_QUEUE = 20


def run(ctx: Context) -> dict:
    world = make_world("bench-review")
    text = TextGenerator(seed=3)
    client = Client()
    client.force_login(world.reviewer)
    results = {}
    seeded = 0
    for size in (SMALL_QUEUE, ctx.scale.review_pending):
        with ctx.progress(size - seeded, f"seed {size:,} pending proposals") as bar:
            seed_pending_proposals(
                tenant=world.tenant,
                agent=world.agent,
                evidence=world.evidence,
                count=size - seeded,
                text=text,
                progress=bar.update,
            )
        seeded = size
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE proposals_proposal")
            cursor.execute("VACUUM ANALYZE proposals_proposalevidence")
        newest = Proposal.objects.filter(tenant=world.tenant, status="pending_review").latest("created_at")
        results[str(size)] = {
            "queue": page(ctx, client, "/review/"),
            "proposal": page(ctx, client, f"/review/proposals/{newest.pk}/"),
        }
    return {
        "sizes": results,
        "constant_queries": all(
            results[str(SMALL_QUEUE)][name]["queries"]
            == results[str(ctx.scale.review_pending)][name]["queries"]
            for name in ("queue", "proposal")
        ),
    }


def page(ctx: Context, client: Client, path: str) -> dict:
    """Render ``path`` repeatedly; return median p50/p95 and the query count of one render."""
    response = client.get(path)  # warm: templates compiled, connection open
    if response.status_code != 200:
        raise RuntimeError(f"{path} answered {response.status_code}")
    runs = []
    for _ in range(ctx.scale.repeats):
        run = Run()
        started = time.perf_counter()
        for _ in range(ctx.scale.page_renders):
            began = time.perf_counter()
            response = client.get(path)
            run.latencies.append(time.perf_counter() - began)
            run.errors += response.status_code != 200
        run.wall_seconds = time.perf_counter() - started
        runs.append(run)
    with CaptureQueriesContext(connection) as queries:
        client.get(path)
    return {**over_runs(runs), "queries": len(queries)}


def _auditor_client() -> Client:
    auditor, _ = User.objects.get_or_create(
        username="bench-auditor", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(auditor)
    return client


def receipts_admin(ctx: Context) -> dict:
    """The admin's receipts changelist, as a superuser auditor sees it."""
    return page(ctx, _auditor_client(), "/admin/executor/receipt/")


def memory_timeline(ctx: Context, memory_id) -> dict:
    """One memory's timeline page (every receipt about it), among all the tenant's receipts."""
    return page(ctx, _auditor_client(), f"/admin/executor/receipt/memory/{memory_id}/")


def receipts_export(lines: int) -> dict:
    """Stream the unfiltered JSON Lines export until ``lines`` lines: first line and rows per second."""
    response = _auditor_client().get("/admin/executor/receipt/export.jsonl")
    if response.status_code != 200:
        raise RuntimeError(f"the export answered {response.status_code}")
    started, first, read = time.perf_counter(), None, 0
    for chunk in response.streaming_content:
        read += bytes(chunk).count(b"\n")
        first = first if first is not None else time.perf_counter() - started
        if read >= lines:
            break
    seconds = time.perf_counter() - started
    response.close()
    return {
        "lines": read,
        "first_line_ms": round((first or 0) * 1000, 1),
        "lines_per_second": round(read / seconds),
    }
