"""CI runs the whole benchmark at smoke scale, so the benchmark code cannot rot.

No timing is asserted (speed is the benchmark's business); this checks
that every part runs against the real stack (gunicorn, Celery executor
workers, PostgreSQL, Redis) and reports something meaningful.
"""

import json
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.faults.harness import free_port

pytestmark = pytest.mark.services
ROOT = Path(__file__).resolve().parents[2]


def _bench_urls() -> tuple[str, str]:
    """A database named after this run's test database, and a Redis database beside its broker's.

    Neither is ``make bench``'s (``custodian_bench``, Redis 13), which the smoke run recreates and
    flushes: two checkouts running at once stay apart. The Redis database is the broker's + 2 (the
    cache takes + 1).
    """
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    host = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
    database = f"postgres://{auth}@{host}/{db['NAME']}_bench_smoke"
    broker = urllib.parse.urlsplit(settings.CELERY_BROKER_URL)
    number = broker.path.strip("/")
    redis_db = (int(number) + 2) % 16 if number.isdigit() else 2
    if redis_db == 13:
        redis_db = 14
    return database, broker._replace(path=f"/{redis_db}").geturl()


def test_smoke_benchmark_runs_every_part_and_writes_the_report(tmp_path):
    database, redis = _bench_urls()
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--scale",
            "smoke",
            "--quiet",
            "--out",
            str(tmp_path),
            "--database-url",
            database,
            "--redis-url",
            redis,
            "--port",
            str(free_port()),
        ],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    document = json.loads((tmp_path / "latest.json").read_text())
    results = document["results"]
    assert set(results) == {
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
    }
    conversation = results["conversation"]
    assert conversation["accepted"] == conversation["applied"] == conversation["turns"] > 0
    assert all(run["errors"] == 0 and run["proposals"] > 0 for run in results["submit"]["batch"])
    maintenance = results["maintenance"]
    assert maintenance["proposals"]["proposed"] > 0
    assert sum(row["candidates"] for row in maintenance["selection"].values()) > 0
    observability = results["observability"]
    assert observability["metrics_recorded"] and observability["bare_records_nothing"]
    assert all(run["errors"] == 0 for runs in observability["runs"].values() for run in runs)
    dreaming = results["dreaming"]
    assert dreaming["selection"]["windows"] > 0 and dreaming["pass"]["proposals"] > 0
    assert dreaming["pass"]["stale"] == dreaming["pass"]["refused"] == 0
    assert dreaming["observations"]["refused"] == 0 and dreaming["observations"]["proposals"] > 0
    assert maintenance["compaction"]["sweep"]["applied"] > 0
    sets = results["quality"]["sets"]
    assert set(sets) == {"templated", "long_chats", "long_chats_unnamed"}
    for quality in sets.values():
        assert quality["refused_turns"] == 0 and quality["memories"] == quality["turns"] > 0
        assert quality["search"]["count"] == quality["questions"] > 0 and quality["search"]["errors"] == 0
        assert set(quality["custodian"]) == set(quality["bm25"]) >= {"all", "single_hop", "current"}
        assert quality["neighbours"]["neighbours"] > 0
    for name in ("long_chats", "long_chats_unnamed"):
        assert {"open_domain", "adversarial", "multi_hop"} <= set(sets[name]["custodian"])
    assert results["startup"]["top_imports"] and all(
        row["p50_ms"] > 0 for row in results["startup"]["commands"].values()
    )
    measured = [
        results["submit"]["clients_1"],
        results["submit"]["clients_8"],
        results["e2e"],
        *(
            size[kind]
            for size in results["recall"]["sizes"].values()
            for kind in ("search", "search_valid_at", "get")
        ),
    ]
    assert all(m["errors"] == 0 and m["runs"][0]["count"] > 0 for m in measured)
    assert all(
        size[kind]["empty"] < size[kind]["runs"][0]["count"]
        for size in results["recall"]["sizes"].values()
        for kind in ("search", "search_valid_at")
    )
    for drained in (results["drain"], results["drain"]["tenants_4"]):
        for workers in ("workers_1", "workers_2"):
            (run,) = drained[workers]["runs"]
            assert run["outcomes"] == {"applied": run["backlog"]}
    assert all(
        size["verify_receipts"]["receipts"] >= int(n) for n, size in results["recall"]["sizes"].items()
    )
    assert all(
        size["memory_timeline"]["errors"] == 0 and size["receipts_export"]["lines"] >= 200
        for size in results["recall"]["sizes"].values()
    )
    assert results["review"]["constant_queries"] is True
    assert {row["target"] for row in document["targets"]} and (tmp_path / "latest.md").read_text().count(
        "|"
    ) > 20
    for plot in ("recall_latency", "submit_latency", "executor_drain", "review_pages"):
        assert (tmp_path / f"{plot}.png").stat().st_size > 1000
