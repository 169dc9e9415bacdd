"""A search's fence check costs the invalidated evidence, not a probe per candidate.

Every read asks whether a memory rests on invalidated evidence
(``MemoryQuerySet.with_fence``). With many evidence revisions and no index on the
few invalidated ones, PostgreSQL checks that per candidate row (two index probes
each: a third of a first-stage read of a thousand candidates). The plan is
asserted, not the time: with fresh statistics, every statement of a real search
that checks a fence must reach the evidence revisions through the partial index.
"""

import pytest
from django.db import connection

from bench.seed import seed_applied_memories
from bench.textgen import TextGenerator
from evidence.models import EvidenceRevision
from tests.factories import make_evidence
from tests.plans import plan_nodes, statements

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

REVISIONS = EvidenceRevision._meta.db_table
MORE_REVISIONS = 100_000  # how many valid revisions the tenant's sources gain


@pytest.fixture
def seeded(agent):
    text = TextGenerator(seed=11, vocabulary=200)
    evidence = [make_evidence(agent.agent) for _ in range(2)]
    seed_applied_memories(tenant=agent.tenant, agent=agent.agent, evidence=evidence, count=2000, text=text)
    with connection.cursor() as cursor:  # newer valid revisions of the same two sources
        cursor.execute(
            f"INSERT INTO {REVISIONS} (id, revision, content, content_hash, status, status_reason,"
            " created_at, created_by_id, tenant_id, source_id, admission_findings)"
            " SELECT gen_random_uuid(), revision + n, content, content_hash, 'valid', '', created_at,"
            f" created_by_id, tenant_id, source_id, admission_findings FROM {REVISIONS},"
            " generate_series(1, %s) AS n WHERE id = ANY(%s)",
            [MORE_REVISIONS // len(evidence), [revision.id for revision in evidence]],
        )
        for table in ("memory_core_memory", "memory_core_memoryevidence", REVISIONS):
            cursor.execute(f"VACUUM ANALYZE {table}")
    return text


def test_a_search_finds_fenced_memories_through_the_invalidated_revisions_index(api, seeded):
    with statements() as ran:  # with their values written in: reads bound on the server show placeholders
        response = api.post(
            "/api/v1/recall/search", {"query": " ".join(seeded.query_words(2)), "limit": 10}, format="json"
        )
    assert response.status_code == 200, response.content
    assert response.json()["results"]
    fenced_reads = [sql for sql in ran if "'invalidated'" in sql]
    assert fenced_reads, "the search checked no fence"
    for sql in fenced_reads:
        nodes = plan_nodes(sql)
        reached = {n.get("Index Name") for n in nodes if n.get("Relation Name") == REVISIONS}
        assert reached == {"evidence_revision_invalidated"}, (reached, sql)
