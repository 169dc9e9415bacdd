"""The receipt list's chain order is served by receipt_unique_seq, read backwards: no sort of the table.

The plan is asserted, not the time: with fresh statistics, PostgreSQL's plan for the list's real
statement (captured from a real request) must walk the (tenant, seq) index, for one tenant and for
several, as an auditor of two tenants or a superuser sees them.
"""

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from bench.seed import seed_applied_memories
from bench.textgen import TextGenerator
from tests.factories import make_agent, make_evidence
from tests.plans import plan_nodes

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

SEEDED = 3000


@pytest.fixture
def seeded(agent):
    text = TextGenerator(seed=7, vocabulary=200)
    other = make_agent("second-desk", "second-agent")
    for handle in (agent, other):
        evidence = [make_evidence(handle.agent)]
        seed_applied_memories(
            tenant=handle.tenant, agent=handle.agent, evidence=evidence, count=SEEDED, text=text
        )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE executor_receipt")


def _list_plan(client, query: str = "") -> list[dict]:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reverse("admin:executor_receipt_changelist") + query).status_code == 200
    listing = [
        q["sql"]
        for q in captured.captured_queries
        if 'FROM "executor_receipt"' in q["sql"] and "ORDER BY" in q["sql"]
    ]
    assert listing, "the list read no receipts"
    return plan_nodes(listing[0])


@pytest.mark.parametrize("query", ["", "?tenant__id__exact={tenant}"])
def test_the_list_walks_the_chain_index_without_sorting(client, agent, seeded, query):
    client.force_login(User.objects.create_superuser("root", password="x"))
    nodes = _list_plan(client, query.format(tenant=agent.tenant.pk))
    receipt_scans = [n for n in nodes if n.get("Relation Name") == "executor_receipt"]
    assert [(n["Node Type"], n.get("Index Name"), n.get("Scan Direction")) for n in receipt_scans] == [
        ("Index Scan", "receipt_unique_seq", "Backward")
    ]
    assert not [n for n in nodes if n["Node Type"] in ("Sort", "Incremental Sort")]
