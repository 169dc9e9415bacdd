"""What observing requests costs the web server: CPU time per submit, bare against full.

"bare" starts gunicorn with ``CUSTODIAN_OBSERVABILITY=off``: every observer of requests
(``OBSERVABILITY_MIDDLEWARE`` in ``config/settings.py``: the metrics middleware, and whatever
joins it there) and the metrics signal receivers are gone. "full" is the configuration as
shipped (multiprocess metrics, as ``config/gunicorn.py`` sets them up). Each run restarts
gunicorn, warms its workers, then sends ``observability_submits`` auto-apply submits from one
client while one executor worker applies them, and reads the CPU time (user + system) the
gunicorn workers spent from ``/proc``: process CPU, not wall time, so the load generator and
the executor sharing the cores do not count. Runs alternate bare, full, bare, full, … (``repeats``
of each: 3 at full scale, 1 at smoke scale) so a drift in the machine touches both alike. The
target: full costs at most 5% more per submit.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.client import ApiClient
from bench.context import Context, next_number
from bench.parts.submit import wait_for_outbox
from bench.world import make_world, preference_payload

CONFIGURATIONS = {"bare": {"CUSTODIAN_OBSERVABILITY": "off"}, "full": {}}
WARM_UP_SUBMITS = 40  # every worker has imported and connected before the count starts
TICKS = os.sysconf("SC_CLK_TCK")
METRICS_TOKEN = "bench-" + "m" * 40
ROOT = Path(__file__).resolve().parents[2]
RECORDING_CALLS = 20_000
# What the web process records for one submit, alone, in multiprocess mode: far below what the
# process CPU comparison can resolve, so it is measured on its own too.
RECORDING = """
import sys, time
from metrics import instruments, recording
n = int(sys.argv[1])
started = time.process_time()
for _ in range(n):
    instruments.REQUESTS_IN_PROGRESS.inc()
    instruments.REQUESTS_IN_PROGRESS.dec()
    recording.request_answered(
        route="/api/v1/proposals/", method="POST", status=201, seconds=0.01, problem_code=""
    )
    recording.proposals_submitted([("auto_apply", "auto-owner-preference")])
print((time.process_time() - started) / n * 1e6)
"""


def run(ctx: Context) -> dict:
    world = make_world("bench-observability")
    runs: dict[str, list[dict]] = {name: [] for name in CONFIGURATIONS}
    ctx.stack.start_workers(1)
    try:
        ctx.stack.wait_until_workers_ready()
        for _ in range(ctx.scale.repeats):
            for name, env in CONFIGURATIONS.items():
                runs[name].append(_run(ctx, world, name, env))
        wait_for_outbox(world.tenant)
    finally:
        ctx.stack.stop_workers()
        ctx.stack.stop_web()
        ctx.stack.start_web()  # the stack as the other parts expect it
    bare, full = (_median(runs[name], "cpu_ms_per_submit") for name in CONFIGURATIONS)
    recording_us = _recording_microseconds()
    return {
        "recording_us_per_submit": recording_us,
        "recording_percent_of_bare": round(recording_us / (bare * 1000) * 100, 3) if bare else 0,
        "submits_per_run": ctx.scale.observability_submits,
        "runs": runs,
        "bare_cpu_ms_per_submit": bare,
        "full_cpu_ms_per_submit": full,
        "overhead_percent": round((full - bare) / bare * 100, 2) if bare else 0,
        "metrics_recorded": all(run["metrics_recorded"] for run in runs["full"]),
        "bare_records_nothing": not any(run["metrics_recorded"] for run in runs["bare"]),
    }


def _run(ctx: Context, world, name: str, env: dict[str, str]) -> dict:
    ctx.stack.stop_web()
    ctx.stack.start_web(CUSTODIAN_METRICS_TOKEN=METRICS_TOKEN, **env)
    client = ApiClient("127.0.0.1", ctx.stack.port, world.token)
    errors = sum(_submit(client, world) != 201 for _ in range(WARM_UP_SUBMITS))
    workers = _gunicorn_workers(ctx.stack.web.pid)
    before = _cpu_seconds(workers)
    started = time.perf_counter()
    bar = ctx.progress(ctx.scale.observability_submits, f"submit, {name}")
    for _ in range(ctx.scale.observability_submits):
        bar.update()
        errors += _submit(client, world) != 201
    bar.close()
    cpu = _cpu_seconds(workers) - before
    if _gunicorn_workers(ctx.stack.web.pid) != workers:
        raise RuntimeError("a gunicorn worker was replaced during the run: its CPU time is lost")
    return {
        "configuration": name,
        "cpu_ms_per_submit": round(cpu * 1000 / ctx.scale.observability_submits, 3),
        "wall_seconds": round(time.perf_counter() - started, 2),
        "errors": errors,
        "metrics_recorded": _metrics_recorded(ctx),
    }


def _recording_microseconds() -> float:
    """CPU microseconds the metrics calls of one submit take, in multiprocess mode (its own process)."""
    with tempfile.TemporaryDirectory(prefix="bench-metrics-") as directory:
        completed = subprocess.run(
            [sys.executable, "-c", RECORDING, str(RECORDING_CALLS)],
            cwd=ROOT,
            env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": directory},
            capture_output=True,
            text=True,
            check=True,
        )
    return round(float(completed.stdout.strip()), 2)


def _submit(client: ApiClient, world) -> int:
    n = next_number()
    status, _, _ = client.request(
        "POST", "/api/v1/proposals/", preference_payload(world, n), headers={"Idempotency-Key": f"o{n}"}
    )
    return status


def _gunicorn_workers(master: int) -> frozenset[int]:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return frozenset(int(pid) for pid in children)


def _cpu_seconds(pids: frozenset[int]) -> float:
    """User + system CPU of these processes so far (``/proc/<pid>/stat`` fields 14 and 15)."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        total += int(fields[11]) + int(fields[12])
    return total / TICKS


def _metrics_recorded(ctx: Context) -> bool:
    """Whether /metrics answers (bare: 404, for nothing records)."""
    client = ApiClient("127.0.0.1", ctx.stack.port, METRICS_TOKEN)
    client.headers["Accept"] = "text/plain"
    status, _, _ = client.request("GET", "/metrics")
    return status == 200


def _median(runs: list[dict], key: str) -> float:
    return round(statistics.median(run[key] for run in runs), 3)
