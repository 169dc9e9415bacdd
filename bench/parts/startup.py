"""Command start-up: how long ``manage.py check`` and ``help`` take, and which imports cost most.

Each command runs in a fresh interpreter, on the embedded default (no
DATABASE_URL / REDIS_URL) and on the benchmark's PostgreSQL + Redis; the
import profile is ``python -X importtime manage.py check``, summed per
top-level import.
"""

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.context import Context

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ("check", "help")


def run(ctx: Context) -> dict:
    embedded = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    results: dict = {"commands": {}}
    for mode, env in (("embedded", embedded), ("postgres", dict(os.environ))):
        for command in COMMANDS:
            seconds = [_timed(["manage.py", command], env) for _ in range(ctx.scale.repeats)]
            results["commands"][f"{mode} {command}"] = {"p50_ms": round(statistics.median(seconds) * 1000, 1)}
    results["top_imports"] = _top_imports(dict(os.environ))
    return results


def _timed(args: list[str], env: dict) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=ROOT, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def _top_imports(env: dict, count: int = 8) -> list[dict]:
    """The top-level imports of ``manage.py check`` with the most cumulative time."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "manage.py", "check"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    totals = []
    for line in done.stderr.decode().splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit() and not parts[2].startswith("  "):
            totals.append({"module": parts[2].strip(), "ms": round(int(parts[1]) / 1000, 1)})
    return sorted(totals, key=lambda row: -row["ms"])[:count]
