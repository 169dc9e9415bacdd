"""The memories of a subject a question names are read newest first by an index, however many.

Every search that names a subject (its id's words, "quant desk" for
``quant-desk``) reads that subject's memories to join the first stage's
candidates, at most the first stage's pool of them, newest first. A subject
may hold most of a tenant's memories; with fresh statistics, PostgreSQL must
read them in order from ``memory_subject_recent_idx`` and stop at the pool,
never sort them all. The plan is asserted, not the time.
"""

import pytest
from django.db import connection

from bench.seed import seed_applied_memories
from bench.textgen import TextGenerator
from memory_core.models import Memory
from tests.factories import make_evidence
from tests.plans import plan_nodes, statements

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

MEMORIES = Memory._meta.db_table


@pytest.fixture
def seeded(agent):
    text = TextGenerator(seed=13, vocabulary=200)
    evidence = [make_evidence(agent.agent) for _ in range(2)]
    seed_applied_memories(tenant=agent.tenant, agent=agent.agent, evidence=evidence, count=6000, text=text)
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {MEMORIES}")
    return text


def test_a_named_subjects_memories_are_read_in_order_from_the_index(api, seeded, agent):
    named = Memory.objects.filter(tenant=agent.tenant, subject_id="quant-desk").count()
    assert named > 1000  # more than the pool: a sort would read them all
    query = f"What did the quant desk say about {seeded.query_words(1)[0]}?"
    with statements() as ran:
        response = api.post("/api/v1/recall/search", {"query": query, "limit": 10}, format="json")
    assert response.status_code == 200, response.content
    reads = [sql for sql in ran if "'quant-desk'" in sql and "LIMIT" in sql]
    assert reads, "the search read no memories of the subject it names"
    for sql in reads:
        nodes = plan_nodes(sql)
        reached = {n.get("Index Name") for n in nodes if n.get("Relation Name") == MEMORIES}
        assert "memory_subject_recent_idx" in reached, (reached, sql)
        assert not any(n["Node Type"] in ("Sort", "Incremental Sort") for n in nodes), sql
