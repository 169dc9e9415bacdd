"""Each script in examples/ runs against a live Custodian with a real executor worker and says
what it should. The scripts get only what a user gives them: a URL and tokens in the environment.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.live import make_reviewer

BASE_DIR = Path(__file__).resolve().parent.parent.parent
EXAMPLES = BASE_DIR / "examples"

EXPECTED = {
    "01_store_preference.py": [
        "classification=auto_apply",
        "receipt  [outcome=applied",
        "recalled  [statement=Alice prefers weekly summaries",
    ],
    "02_factor_conclusion_review.py": [
        "status=pending_review  reasons=shared_fact_requires_review",
        "no receipt while it waits for review",
        "PM approved over REST",
        "receipt  [outcome=applied",
        "memory  [state=active  statement=momentum_12_1 shows unstable IC",
    ],
    "03_lifecycle.py": [
        "expire  [classification=auto_apply  outcome=applied]",
        "state  [state=expired]",
        "restore  [status=pending_review]",
        "restore  [outcome=applied]",
        "state  [state=active]",
        "delete  [outcome=applied]",
        "purge  [status=pending_review  approvals=2]",
        "purge  [outcome=applied]",
        "after purge: get answers 404 not_found",
    ],
    "04_evidence_fencing.py": [
        "stored  [memory=",
        "after invalidation  [state=fenced  mode=metadata_only]",
        "fence receipt  [outcome=applied]",
        "corrected revision  [revision=2]",
        "revalidated  [outcome=applied  state=active  revision=2]",
    ],
    "05_audit_and_export.py": [
        "audit events for the memory",
        "audit events by correlation id  [count=1]",
        "exported",
    ],
    "06_mgp_session.py": [
        "capabilities  [profiles=",
        "written  [state=active  memory_id=mem_pref_",
        "searched  [top=Alice prefers weekly summaries",
        "got  [consumable_text=Alice prefers weekly summaries",
        "desk fact  [task=",
        "PM approved over REST",
        "task  [status=completed  memory_id=mem_fact_",
        "expired  [state=expired]",
        "audit  [actions=",
    ],
    "07_mcp_session.py": [
        "tools  [names=forget,get_memory,proposal_status,recall,remember]",
        "remember  [message=stored: memory",
        "recall  [top=Alice prefers charts over tables",
        "receipt resource",
        "forget  [message=expired: memory",
    ],
    "09_langgraph_store.py": [
        "graph recalled  [said=Weekly summaries, please",
        "got  [cadence=weekly  key=summary_cadence]",
        "desk fact pending  [proposal=",
        "get while pending  [item=None]",
        "PM approved over REST",
        "get after approval  [ic=0.012]",
        "deleted  [get=None]",
    ],
    "08_openai_agents_tools.py": [
        "- tools: forget,recall,remember",
        '- remember: {"status": "stored", "memory_id": ',
        '- remember: {"status": "duplicate", "memory_id": ',
        "- remember: unknown argument(s): subject; remember accepts: text, about, type,",
        '"state": "active", "text": "Alice prefers charts over tables (',
        '- forget: {"status": "expired", "memory_id": ',
    ],
}


def test_every_example_is_covered():
    scripts = {path.name for path in EXAMPLES.glob("[0-9][0-9]_*.py")}
    assert scripts == set(EXPECTED)


def test_the_openai_agents_quick_start_is_example_08_as_tested():
    page = (BASE_DIR / "docs" / "adapters" / "openai-agents.md").read_text()
    assert '--8<-- "examples/08_openai_agents_tools.py"' in page  # included whole by pymdownx.snippets


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_example_runs_and_says_what_it_should(script, live_server, agent, executor, tmp_path):
    agent.agent.can_invalidate_evidence = True  # the operator's permission example 04 needs
    agent.agent.save(update_fields=["can_invalidate_evidence"])
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
        "CUSTODIAN_URL": live_server.url,
        "CUSTODIAN_TOKEN": agent.token,
        "CUSTODIAN_REVIEWER_TOKEN": make_reviewer("pm", agent.tenant).token,
        "CUSTODIAN_REVIEWER2_TOKEN": make_reviewer("pm2", agent.tenant).token,
        "CUSTODIAN_EXPORT": str(tmp_path / "export.jsonl"),
        "CUSTODIAN_VAR_DIR": str(tmp_path / "var"),
        "PYTHONPATH": str(BASE_DIR / "client"),
    }
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    print(run.stdout)  # shown with -s, and on failure
    assert run.returncode == 0, run.stdout + run.stderr
    lines = iter(run.stdout.splitlines())
    for expected in EXPECTED[script]:  # in this order
        assert any(expected in line for line in lines), f"{expected!r} missing from:\n{run.stdout}"
    if script.startswith("05"):
        rows = [json.loads(line) for line in (tmp_path / "export.jsonl").read_text().splitlines()]
        assert {row["kind"] for row in rows} == {"receipt", "access_event"}
