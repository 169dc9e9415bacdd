"""Recall: search and get-by-id latency as one tenant grows to each size in ``recall_sizes``.

The tenant is seeded with the bulk path (valid rows: each memory has its
proposal, outbox entry, receipt, history row and evidence links), so the
receipts admin and verify_receipts are measured on the same world; both
are recorded here per size and reported by their own parts.
"""

import random
import time

from django.db import connection
from django.utils import timezone

from bench.client import ApiClient
from bench.context import Context
from bench.parts import review, verify
from bench.seed import seed_applied_memories
from bench.stats import Run, over_runs
from bench.textgen import TextGenerator
from bench.world import make_world
from memory_core.models import Memory

SEEDED_TABLES = [
    "memory_core_memory",
    "memory_core_historicalmemory",
    "memory_core_memoryevidence",
    "memory_core_memoryvector",  # read per search for the first stage's candidates, with an embedder
    "evidence_evidencesource",
    "evidence_evidencerevision",
    "proposals_proposal",
    "proposals_proposalevidence",
    "proposals_outboxentry",
    "executor_receipt",
]


def run(ctx: Context) -> dict:
    world = make_world("bench-recall")
    text = TextGenerator(seed=7)
    sizes, seeded = {}, Memory.objects.filter(tenant=world.tenant).count()  # > 0 with --keep-database
    for size in ctx.scale.recall_sizes:
        if size < seeded:
            continue  # a kept database already grew past it
        started = time.perf_counter()
        with ctx.progress(size - seeded, f"seed memories to {size:,}") as bar:
            seed_applied_memories(
                tenant=world.tenant,
                agent=world.agent,
                evidence=world.evidence,
                count=size - seeded,
                text=text,
                progress=bar.update,
            )
        seed_seconds = time.perf_counter() - started
        _vacuum_analyze()
        added, seeded = size - seeded, size
        sizes[str(size)] = {
            "postgres_memory": _buffers_against_tenant(),
            "seed_seconds": round(seed_seconds, 1),
            "seed_memories_per_second": round(added / seed_seconds, 1) if added else None,
            "search": over_runs([_search(ctx, world, text) for _ in range(ctx.scale.repeats)]),
            "search_valid_at": over_runs(
                [_search(ctx, world, text, valid_at=True) for _ in range(ctx.scale.repeats)]
            ),
            "get": over_runs([_get(ctx, world) for _ in range(ctx.scale.repeats)]),
            "receipts_admin": review.receipts_admin(ctx),
            "memory_timeline": review.memory_timeline(ctx, _some_memory(world)),
            "receipts_export": review.receipts_export(ctx.scale.export_lines),
            "verify_receipts": verify.measure(world.tenant),
        }
    return {"sizes": sizes}


def _some_memory(world):
    return Memory.objects.filter(tenant=world.tenant).order_by("id").values_list("id", flat=True).first()


def _buffers_against_tenant() -> dict:
    """PostgreSQL's shared_buffers beside what recall reads (memories and their indexes), in MiB.

    Recall visits one heap page per candidate; below this size the pages come
    from the operating system instead of PostgreSQL's own cache, several times
    slower (docs/operations.md, "PostgreSQL settings"). The report names both.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('shared_buffers'),"
            " pg_size_bytes(current_setting('shared_buffers')) / 1048576,"
            " pg_total_relation_size('memory_core_memory') / 1048576"
        )
        setting, buffers, memories = cursor.fetchone()
    return {"shared_buffers": setting, "shared_buffers_mib": buffers, "memories_with_indexes_mib": memories}


def _vacuum_analyze() -> None:
    """What autovacuum does in production between bulk loads: fresh statistics, a visibility map."""
    with connection.cursor() as cursor:
        for table in SEEDED_TABLES:
            cursor.execute(f"VACUUM ANALYZE {table}")


def _search(ctx: Context, world, text: TextGenerator, *, valid_at: bool = False) -> Run:
    """The same words searched now, or (``valid_at``) as of a moment: the tenant's history then.

    Seeded memories carry no validity window, so "as of now" finds the same hits, read from
    every memory's history instead of the memories: what a point-in-time search costs.
    """
    client = ApiClient("127.0.0.1", ctx.stack.port, world.token)
    words = text.query_words(ctx.scale.recall_queries)
    result = Run()
    started = time.perf_counter()
    for word in words:
        body = {"query": word, "limit": 10}
        if valid_at:
            body["filters"] = {"valid_at": timezone.now().isoformat()}
        status, body, seconds = client.request("POST", "/api/v1/recall/search", body)
        if status == 200:
            result.latencies.append(seconds)
            result.empty += not body["results"]
        else:
            result.errors += 1
    result.wall_seconds = time.perf_counter() - started
    return result


def _get(ctx: Context, world) -> Run:
    client = ApiClient("127.0.0.1", ctx.stack.port, world.token)
    ids = list(Memory.objects.filter(tenant=world.tenant).order_by("id").values_list("id", flat=True)[:5000])
    picks = random.Random(1).choices(ids, k=ctx.scale.recall_queries)
    result = Run()
    started = time.perf_counter()
    for memory_id in picks:
        status, _, seconds = client.request("GET", f"/api/v1/memories/{memory_id}/")
        if status == 200:
            result.latencies.append(seconds)
        else:
            result.errors += 1
    result.wall_seconds = time.perf_counter() - started
    return result
