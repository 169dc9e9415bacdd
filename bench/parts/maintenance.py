"""Maintenance: the dormancy sweep over the recall tenant (time and peak Python memory).

The recall part's tenant is freshly seeded, so nothing in it is dormant
today; the sweep is evaluated as if it ran ``AHEAD_DAYS`` later, when every
never-read memory has fallen below its type's threshold. ``selection`` is the
read-only candidate query per registered type (bounded by ``SCAN``);
``proposals`` runs the sweep for real (each proposal is submitted in its own
durable transaction) on a small separate tenant, ``bench-maintenance``, so
the recall tenant is left as it was.
"""

import time
import tracemalloc
from datetime import timedelta

from django.utils import timezone

from bench.context import Context
from bench.seed import seed_applied_memories
from bench.textgen import TextGenerator
from bench.world import make_world
from memory_core.models import Memory
from proposals.services import propose_dormancy
from proposals.services.dormancy import dormant_candidates
from registrations.selectors import active_registration

AHEAD_DAYS = 400
SCAN = 2000


def run(ctx: Context) -> dict:
    world = make_world("bench-recall")
    memories = Memory.objects.filter(tenant=world.tenant).count()
    if not memories:  # run without the recall part: seed its smallest size
        memories = ctx.scale.recall_sizes[0]
        seed_applied_memories(
            tenant=world.tenant,
            agent=world.agent,
            evidence=world.evidence,
            count=memories,
            text=TextGenerator(seed=7),
        )
    ahead = timezone.now() + timedelta(days=AHEAD_DAYS)
    registration = active_registration(tenant_id=world.tenant.id)
    selection = {}
    for memory_type, entry in sorted(registration.document["types"].items()):
        found, seconds, peak = _measured(
            lambda t=memory_type, e=entry: dormant_candidates(
                tenant_id=world.tenant.id, memory_type=t, parameters=e["activation"], now=ahead, scan=SCAN
            )
        )
        selection[memory_type] = {"candidates": len(found), "seconds": seconds, "peak_kib": peak}
    limit = max(ctx.scale.recall_queries, 20)
    small = make_world("bench-maintenance")
    waiting = Memory.objects.filter(tenant=small.tenant, state=Memory.State.ACTIVE).count()
    if waiting < limit:
        seed_applied_memories(
            tenant=small.tenant,
            agent=small.agent,
            evidence=small.evidence,
            count=limit - waiting,
            text=TextGenerator(seed=13),
        )
    proposed, seconds, peak = _measured(
        lambda: propose_dormancy(limit=limit, scan=SCAN, now=ahead, tenant_id=small.tenant.id)
    )
    return {
        "memories": memories,
        "ahead_days": AHEAD_DAYS,
        "scan": SCAN,
        "selection": selection,
        "proposals": {
            "tenant_memories": max(waiting, limit),
            "proposed": proposed,
            "seconds": seconds,
            "per_second": round(proposed / seconds, 1) if seconds else None,
            "peak_kib": peak,
        },
    }


def _measured(call):
    tracemalloc.start()
    started = time.perf_counter()
    try:
        value = call()
    finally:
        seconds = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return value, round(seconds, 3), round(peak / 1024, 1)
