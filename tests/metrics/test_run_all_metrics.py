"""``bin/run-all`` shares one fresh metrics directory between its web server and executor worker."""

import shutil

import httpx
import pytest

from tests.metrics.scraping import METRICS_TOKEN, bearer, parse
from tests.test_run_all import _running, demo_var  # noqa: F401  (demo_var is a fixture)
from tests.workers import wait_until

pytestmark = pytest.mark.mode_independent  # bin/run-all on the embedded default, in its own var/


def test_the_demos_receipts_counted_by_the_worker_show_in_the_web_servers_scrape(
    demo_var,  # noqa: F811  (the fixture imported above)
    tmp_path,
    monkeypatch,
):
    var_dir = tmp_path / "var"
    shutil.copytree(demo_var[0], var_dir)
    stale = var_dir / "metrics" / "counter_99999.db"  # a previous start's file
    stale.parent.mkdir()
    stale.write_bytes(b"\0" * 16)
    monkeypatch.setenv("CUSTODIAN_METRICS_TOKEN", METRICS_TOKEN)
    found = {}

    def receipts_counted() -> bool:
        response = httpx.get(f"http://127.0.0.1:{port}/metrics", headers=bearer(), timeout=30)
        found["scrape"] = parse(response.text)
        return found["scrape"].value("custodian_receipts_total", outcome="applied") >= 1

    with _running(var_dir, tmp_path / "run-all.log") as (_, port):
        wait_until(receipts_counted, timeout=120, what="the demo's receipts in /metrics")
        assert not stale.exists()
    scrape = found["scrape"]
    assert scrape.value("custodian_workers_seen") >= 1
    assert scrape.value("custodian_metrics_database_up") == 1
