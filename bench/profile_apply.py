"""In-process cost of applying: CPU ms and SQL statements per outbox entry, batches of 100.

Seeds released auto-apply proposals (``bench.seed.seed_released_backlog``, what ``release``
writes) and applies them through ``executor.services.apply_entries``, the Celery task's entry
point, in this process: no broker, no worker boot, so what is counted is the executor's own work
per entry (``time.process_time``), which a shared machine's load does not inflate as it does a
drain's wall-clock rate. Run against a scratch database:

    DATABASE_URL=postgres://…/scratch REDIS_URL=redis://…/N python -m bench.profile_apply [--profile]
"""

import argparse
import cProfile
import os
import pstats
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from bench.seed import seed_released_backlog  # noqa: E402
from bench.textgen import TextGenerator  # noqa: E402
from bench.world import make_world  # noqa: E402
from executor.services import apply_entries  # noqa: E402
from proposals.models import OutboxEntry  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--profile", action="store_true", help="print a cProfile (CPU time) of applying")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    world = make_world(f"profile-apply-{time.time_ns()}")
    ids = seed_released_backlog(
        tenant=world.tenant,
        agent=world.agent,
        evidence=world.evidence,
        count=args.entries + args.batch,
        text=TextGenerator(seed=time.time_ns() % 1000),
    )
    worker = {"host": "profile", "pid": os.getpid(), "task": "profile"}
    apply_entries(entry_ids=ids[: args.batch], worker=worker)  # warm caches and imports
    ids = ids[args.batch :]
    profiler = cProfile.Profile(time.process_time) if args.profile else None
    cpu = 0.0
    with CaptureQueriesContext(connection) as queries:
        for start in range(0, len(ids), args.batch):
            started = time.process_time()
            if profiler:
                profiler.enable()
            apply_entries(entry_ids=ids[start : start + args.batch], worker=worker)
            if profiler:
                profiler.disable()
            cpu += time.process_time() - started
    done = OutboxEntry.objects.filter(pk__in=ids, status=OutboxEntry.Status.DONE).count()
    assert done == len(ids), f"{done} of {len(ids)} applied"
    print(
        f"apply, batches of {args.batch}: {{'cpu_ms_per_entry': {cpu * 1000 / len(ids):.2f}, "
        f"'statements_per_entry': {len(queries.captured_queries) / len(ids):.2f}}}"
    )
    if profiler:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(40)


if __name__ == "__main__":
    main()
