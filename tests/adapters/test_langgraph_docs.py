"""The LangGraph store page's quick start, run as a user would paste it, against a live server and worker."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent.parent
PAGE = BASE_DIR / "docs" / "adapters" / "langgraph.md"


def quick_start() -> str:
    section = PAGE.read_text().split("## Quick start", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_quick_start_runs_and_stores_through_the_policy(live_server, agent, executor, tmp_path):
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
        "CUSTODIAN_URL": live_server.url,
        "CUSTODIAN_TOKEN": agent.token,
        "PYTHONPATH": str(BASE_DIR / "client"),
    }
    run = subprocess.run(
        [sys.executable, "-c", quick_start()],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines() == [
        "recalled: ['Weekly summaries, please.']",
        "stored: {'text': 'Weekly summaries, please.', 'cadence': 'weekly'}",
    ]
