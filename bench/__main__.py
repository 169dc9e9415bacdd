"""``python -m bench``: run the benchmark parts against a fresh database and write the report.

python -m bench                      # the full run (make bench)
python -m bench --scale smoke        # seconds; CI runs this
python -m bench --only recall,verify # some parts (see bench/README.md)
python -m bench --only quality --embedded  # on the embedded default (SQLite, filesystem broker)
python -m bench --only quality --dataset long_chats --long-chats 3  # one quality set, 3 conversations
python -m bench --only gateway       # MGP's reference gateway beside Custodian's submit (needs wrk)
"""

import argparse
import dataclasses
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = [
    "submit",
    "conversation",
    "e2e",
    "drain",
    "review",
    "recall",
    "maintenance",
    "dreaming",
    "floor",
    "startup",
    "quality",
    "observability",
    "gateway",
]
EMBEDDED_PARTS = {"quality"}  # the others seed with PostgreSQL's COPY
# Needs wrk and PyPI (it installs MGP's reference gateway): a full run's part, never CI's smoke run.
FULL_ONLY_PARTS = {"gateway"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=["smoke", "full"], default="full")
    parser.add_argument(
        "--only",
        default="",
        help=f"comma-separated parts of {PARTS} (default: all; smoke: all but {sorted(FULL_ONLY_PARTS)})",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/custodian_bench"),
    )
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13"))
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument(
        "--web-threads",
        type=int,
        default=1,
        help="threads per gunicorn worker (> 1: gthread, config/gunicorn.py)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument(
        "--embedded",
        action="store_true",
        help="run on the embedded default (a fresh SQLite file and filesystem broker under --out)",
    )
    parser.add_argument(
        "--keep-database",
        action="store_true",
        help="measure on the database as a previous run left it (recall: only at sizes it already reached)",
    )
    parser.add_argument("--recall-sizes", default="", help="comma-separated sizes, instead of the scale's")
    parser.add_argument("--drain-backlog", type=int, help="entries per drain run, instead of the scale's")
    parser.add_argument(
        "--dataset",
        choices=["templated", "long_chats", "long_chats_unnamed", "all"],
        default="all",
        help="the quality part's generated sets (bench/conversations.py, bench/long_chats/; unnamed: "
        "the long chats without the speaker's name in each turn)",
    )
    parser.add_argument("--long-chats", type=int, help="long-chat conversations, instead of the scale's")
    args = parser.parse_args(argv)
    parts = [part.strip() for part in args.only.split(",") if part.strip()] or [
        part for part in PARTS if args.scale == "full" or part not in FULL_ONLY_PARTS
    ]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts: {sorted(unknown)}")
    if args.embedded and set(parts) - EMBEDDED_PARTS:
        parser.error(f"--embedded runs only {sorted(EMBEDDED_PARTS)}")

    # Configure Django for this database before anything imports a model.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from bench.stack import Stack, recreate_database, recreate_embedded

    if args.embedded:
        args.database_url = args.redis_url = ""
        os.environ.pop("DATABASE_URL", None)
        os.environ.pop("REDIS_URL", None)
        os.environ["CUSTODIAN_VAR_DIR"] = str(recreate_embedded(args.out / "embedded-var"))
    else:
        os.environ["DATABASE_URL"] = args.database_url
        os.environ["REDIS_URL"] = args.redis_url
        if not args.keep_database:
            recreate_database(args.database_url)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    if not args.embedded:
        call_command("setup_db_roles", verbosity=0)
        _flush_broker(args.redis_url)

    from bench import report
    from bench.context import SCALES, Context

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    results: dict = {}
    with Stack(
        database_url=args.database_url,
        redis_url=args.redis_url,
        log_dir=out / "logs",
        port=args.port,
        web_workers=args.web_workers,
        web_threads=args.web_threads,
    ) as stack:
        stack.start_web()
        scale = SCALES[args.scale]
        if args.recall_sizes:
            sizes = tuple(int(size) for size in args.recall_sizes.split(","))
            scale = dataclasses.replace(scale, recall_sizes=sizes)
        if args.drain_backlog:
            scale = dataclasses.replace(scale, drain_backlog=args.drain_backlog)
        scale = _quality_scale(scale, args)
        ctx = Context(stack=stack, scale=scale, quiet=args.quiet)
        for name in parts:
            part_started = time.perf_counter()
            print(f"== {name}", file=sys.stderr, flush=True)
            module = __import__(f"bench.parts.{name}", fromlist=["run"])
            results[name] = module.run(ctx)
            results[name]["part_seconds"] = round(time.perf_counter() - part_started, 1)
    document = {
        "meta": _meta(args, started),
        "results": results,
        "targets": report.evaluate(results),
    }
    (out / "latest.json").write_text(json.dumps(document, indent=2, default=str) + "\n")
    (out / "latest.md").write_text(report.markdown(document))
    report.plots(document, out)
    print(report.markdown(document))
    return 0


def _quality_scale(scale, args):
    """The scale with the quality sets and long-chat size the flags ask for."""
    sets = ("templated", "long_chats", "long_chats_unnamed") if args.dataset == "all" else (args.dataset,)
    scale = dataclasses.replace(scale, quality_sets=sets)
    if args.long_chats:
        scale = dataclasses.replace(scale, long_chats=(args.long_chats, scale.long_chats[1]))
    return scale


def _flush_broker(redis_url: str) -> None:
    """Drop messages a previous run left in the benchmark's broker database."""
    import redis

    redis.Redis.from_url(redis_url).flushdb()


def _meta(args, started: float) -> dict:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    return {
        "scale": args.scale,
        "database": "sqlite (embedded)" if args.embedded else "postgresql",
        "started": datetime.datetime.fromtimestamp(started, datetime.UTC).isoformat(timespec="seconds"),
        "seconds": round(time.time() - started, 1),
        "commit": commit,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "web_workers": args.web_workers,
        "web_threads": args.web_threads,
        "embedder": os.environ.get("CUSTODIAN_EMBEDDER", "none"),
    }


if __name__ == "__main__":
    sys.exit(main())
