"""Point-in-time recall (``filters.valid_at``) on a seeded tenant: index-backed, and bounded.

The plan is asserted, not the time: with fresh statistics, PostgreSQL's plan for the real search
statement (captured from a real request) must reach the tenant's history rows through the
history indexes; a nested loop over every memory of the tenant, parsing each one's history, is
what made one such search run until the web worker was killed. Whatever a search costs, a
statement past the web's budget is cancelled and the caller gets a 503 problem, never a 500.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bench.seed import seed_applied_memories
from bench.textgen import TextGenerator
from tests.factories import make_evidence
from tests.plans import plan_nodes

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

HISTORY = "memory_core_historicalmemory"
SEEDED = 3000


@pytest.fixture
def seeded(agent):
    text = TextGenerator(seed=11, vocabulary=200)
    evidence = [make_evidence(agent.agent) for _ in range(2)]
    seed_applied_memories(tenant=agent.tenant, agent=agent.agent, evidence=evidence, count=SEEDED, text=text)
    with connection.cursor() as cursor:
        for table in ("memory_core_memory", HISTORY, "memory_core_memoryevidence"):
            cursor.execute(f"VACUUM ANALYZE {table}")
    return text


def _history_search_plan(api, body: dict) -> list[dict]:
    """Send the search over HTTP; return the nodes of PostgreSQL's plan for its history window query."""
    with CaptureQueriesContext(connection) as captured:
        response = api.post("/api/v1/recall/search", body, format="json")
    assert response.status_code == 200, response.content
    windows = [q["sql"] for q in captured.captured_queries if HISTORY in q["sql"] and "LIMIT" in q["sql"]]
    assert windows, "the search read no history window"
    return plan_nodes(windows[0])


@pytest.mark.parametrize("subject", [None, {"kind": "user", "id": "pm-3"}])
def test_point_in_time_search_never_scans_the_history_table(api, seeded, subject):
    word = seeded.query_words(1)[0]
    filters = {"valid_at": timezone.now().isoformat(), **({"subject": subject} if subject else {})}
    nodes = _history_search_plan(api, {"query": word, "limit": 10, "filters": filters})
    history_scans = [n["Node Type"] for n in nodes if n.get("Relation Name") == HISTORY]
    indexes = {n["Index Name"] for n in nodes if "Index Name" in n}
    assert history_scans and "Seq Scan" not in history_scans, history_scans
    assert {"memory_history_search_vector_gin", "memory_history_valid_at_idx"} <= indexes, indexes


def test_a_search_past_the_statement_budget_answers_a_503_problem(api, seeded):
    with connection.cursor() as cursor:  # what config/settings.py sets on every web connection
        cursor.execute("SET statement_timeout = '1ms'")
    try:
        response = api.post(
            "/api/v1/recall/search",
            {"query": "", "limit": 10, "filters": {"valid_at": timezone.now().isoformat()}},
            format="json",
        )
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET statement_timeout")
    assert response.status_code == 503, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "query_timeout"
    assert int(response["Retry-After"]) >= 1
