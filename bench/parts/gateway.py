"""MGP's reference gateway beside Custodian's governed submit, driven by the same compiled load generator.

The gateway (``mgp-gateway`` from PyPI, in its own virtualenv under ``var/``, in-memory adapter,
no governance, no durability beyond its audit JSON lines) and Custodian's
``POST /api/v1/proposals/`` (gunicorn as ``custodian_web``, one executor worker applying
meanwhile, PostgreSQL + Redis) each take the same user preference from wrk, with keep-alive,
at 1 and 8 connections. Every request carries a unique memory (and, for Custodian, a unique
Idempotency-Key) built by wrk's Lua script, so nothing is a replay or a dedupe conflict.
"""

import json
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from bench.context import Context
from bench.parts.submit import wait_for_outbox
from bench.stack import ROOT
from bench.world import make_world, preference_payload
from proposals.models import Proposal

GATEWAY = "mgp-gateway==0.1.1"
CONNECTIONS = (1, 8)
SECONDS = {"smoke": 3, "full": 15}
PLACEHOLDER = "__N__"

# wrk: one Lua state per thread; each thread numbers its own requests, the thread id keeps them apart.
LUA = r"""
local next_thread = 1
function setup(thread)
  thread:set("tid", next_thread)
  next_thread = next_thread + 1
end
function init(args)
  n = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  AUTH_LINE
end
function request()
  n = n + 1
  local id = "RUN-" .. tid .. "-" .. n
  local body = string.gsub(TEMPLATE, "__N__", id)
  KEY_LINE
  return wrk.format(nil, nil, nil, body)
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRKJSON {\"requests\": %d, \"duration_us\": %d, \"non_2xx\": %d, \"socket_errors\": %d, "
    .. "\"mean_us\": %.1f, \"p50_us\": %d, \"p99_us\": %d, \"max_us\": %d}\n",
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(99), latency.max))
end
"""


def run(ctx: Context) -> dict:
    wrk = shutil.which("wrk")
    if wrk is None:
        raise RuntimeError("the gateway part needs wrk: apt-get install -y wrk (`make bench` installs it)")
    seconds = SECONDS[ctx.scale.name]
    out = ctx.stack.log_dir
    results: dict = {"seconds_per_cell": seconds, "load_generator": _version(wrk)}
    world = make_world("bench-gateway")
    tag = str(time.time_ns())
    gateway = _start_gateway(out)
    if isinstance(gateway, str):
        results["gateway"] = {"error": gateway}
        ctx.notes.append(f"gateway not measured: {gateway}")
    else:
        port, process = gateway
        try:
            url = f"http://127.0.0.1:{port}/mgp/write"
            results["gateway"] = _cells(wrk, url, out / "gateway", _gateway_body(world), f"g{tag}", seconds)
        finally:
            process.terminate()
            process.wait(timeout=20)
    before = Proposal.objects.filter(tenant=world.tenant).count()
    ctx.stack.start_workers(1)  # the executor applies while the agent submits, as in the submit part
    try:
        ctx.stack.wait_until_workers_ready()
        url = f"http://127.0.0.1:{ctx.stack.port}/api/v1/proposals/"
        body = _custodian_body(world)
        results["custodian"] = _cells(wrk, url, out / "custodian", body, f"c{tag}", seconds, world.token)
        started = time.perf_counter()
        results["custodian_backlog_at_end"] = wait_for_outbox(world.tenant)
        results["custodian_catch_up_seconds"] = round(time.perf_counter() - started, 2)
    finally:
        ctx.stack.stop_workers()
    proposals = Proposal.objects.filter(tenant=world.tenant)
    results["custodian_proposals"] = proposals.count() - before
    results["custodian_applied"] = proposals.filter(status=Proposal.Status.APPLIED).count()
    if "error" not in results["gateway"]:
        results["ratio"] = {
            key: round(results["custodian"][key]["per_second"] / results["gateway"][key]["per_second"], 2)
            for key in results["custodian"]
            if results["gateway"][key]["per_second"]
        }
    return results


def _cells(wrk: str, url: str, prefix: Path, body: dict, tag: str, seconds: int, token: str = "") -> dict:
    """Warm the server up (every web worker's first requests, unmeasured), then one run per cell.

    Each run has its own request ids, so no cell replays another's keys or memories.
    """

    def script(name: str) -> Path:
        path = prefix.with_name(f"{prefix.name}-{name}.lua")
        return _script(path, body, tag=f"{tag}{name}", key=bool(token), token=token)

    _wrk(wrk, url, script("warm"), max(CONNECTIONS), 2)
    return {f"connections_{c}": _wrk(wrk, url, script(f"c{c}"), c, seconds) for c in CONNECTIONS}


def _wrk(wrk: str, url: str, script: Path, connections: int, seconds: int) -> dict:
    threads = min(connections, 2)  # two cores: more wrk threads only compete with the server
    completed = subprocess.run(
        [wrk, f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout=10s", "-s", str(script), url],
        capture_output=True,
        text=True,
        timeout=seconds + 60,
    )
    found = re.search(r"^WRKJSON (.*)$", completed.stdout, re.MULTILINE)
    if completed.returncode != 0 or not found:
        raise RuntimeError(f"wrk failed: {completed.stdout[-2000:]} {completed.stderr[-2000:]}")
    raw = json.loads(found.group(1))
    ok = raw["requests"] - raw["non_2xx"] - raw["socket_errors"]
    return {
        "requests": raw["requests"],
        "errors": raw["non_2xx"] + raw["socket_errors"],
        "per_second": round(ok / (raw["duration_us"] / 1e6), 1),
        "mean_ms": round(raw["mean_us"] / 1000, 2),
        "p50_ms": round(raw["p50_us"] / 1000, 2),
        "p99_ms": round(raw["p99_us"] / 1000, 2),
        "max_ms": round(raw["max_us"] / 1000, 2),
    }


def _script(path: Path, body: dict, *, tag: str, key: bool, token: str = "") -> Path:
    template = json.dumps(body, separators=(",", ":"))
    lua = (
        LUA.replace("RUN", tag)
        .replace("TEMPLATE", _lua_string(template))
        .replace("AUTH_LINE", f'wrk.headers["Authorization"] = "Bearer {token}"' if token else "")
        .replace("KEY_LINE", 'wrk.headers["Idempotency-Key"] = id' if key else "")
    )
    path.write_text(lua)
    return path


def _lua_string(text: str) -> str:
    return "[==[" + text + "]==]"


def _custodian_body(world) -> dict:
    """The submit part's auto-apply preference, its numbered parts replaced by wrk's request id."""
    body = json.loads(json.dumps(preference_payload(world, 0)))
    content = body["memory"]["content"]
    content["statement"] = content["statement"].replace("factor run 0", f"factor run {PLACEHOLDER}")
    content["preference_key"] = f"summary_cadence_{PLACEHOLDER}"
    return body


def _gateway_body(world) -> dict:
    """The same preference as an MGP write (the gateway's own envelope and memory object)."""
    memory = _custodian_body(world)["memory"]
    return {
        "request_id": f"req_{PLACEHOLDER}",
        "policy_context": {
            "actor_agent": world.agent.name,
            "acting_for_subject": memory["subject"],
            "requested_action": "write",
            "tenant_id": world.tenant.name,
        },
        "payload": {
            "memory": {
                "memory_id": f"mem_{PLACEHOLDER}",
                "subject": memory["subject"],
                "scope": memory["scope"],
                "type": memory["type"],
                "content": memory["content"],
                "source": {"kind": "chat", "ref": f"chat:{PLACEHOLDER}"},
                "created_at": "2026-11-30T12:00:00Z",
                "sensitivity": memory["sensitivity"],
            }
        },
    }


def _start_gateway(out: Path) -> tuple[int, subprocess.Popen] | str:
    """Install (once) and start the gateway with the in-memory adapter; a reason string if it cannot."""
    venv = ROOT / "var" / "mgp-gateway-0.1.1"
    binary = venv / "bin" / "mgp-gateway"
    if not binary.exists():
        shutil.rmtree(venv, ignore_errors=True)
        pip = str(venv / "bin" / "pip")
        steps = [[sys.executable, "-m", "venv", str(venv)], [pip, "install", "-q", GATEWAY]]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                return f"could not install {GATEWAY}: {(done.stderr or done.stdout)[-500:]}"
    port = _free_port()
    log = open(out / "gateway.log", "wb")  # noqa: SIM115 - closed with the process
    process = subprocess.Popen(
        [
            str(binary),
            "--adapter=memory",
            f"--port={port}",
            "--host=127.0.0.1",
            f"--audit-log={out / 'gateway-audit.jsonl'}",
            "--log-level=WARNING",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/mgp/capabilities", timeout=2).read()
            return port, process
        except OSError:
            if process.poll() is not None:
                return f"the gateway exited; see {out / 'gateway.log'}"
            time.sleep(0.2)
    process.terminate()
    return "the gateway did not answer within 60 s"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _version(wrk: str) -> str:
    done = subprocess.run([wrk, "--version"], capture_output=True, text=True)
    return (done.stdout or done.stderr).splitlines()[0].strip() if (done.stdout or done.stderr) else "wrk"
