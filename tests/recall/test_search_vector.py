"""The stored search vector is the search document, kept current by the database on every write."""

import pytest
from django.db.models import F, TextField
from django.db.models.functions import Cast

from memory_core.models import Memory
from memory_core.search import search_document
from tests.factories import make_evidence, owner_context, submit

pytestmark = pytest.mark.postgres


def _stored_and_computed(memory_id) -> tuple[str, str]:
    row = (
        Memory.objects.filter(pk=memory_id)
        .annotate(computed=Cast(search_document(), TextField()), stored=Cast(F("search_vector"), TextField()))
        .values("stored", "computed")
        .get()
    )
    return row["stored"], row["computed"]


def test_writes_keep_the_stored_vector_equal_to_the_search_document(agent, applied_memory_factory):
    from tests.factories import apply_released

    memory = applied_memory_factory(agent)
    stored, computed = _stored_and_computed(memory.pk)
    assert stored == computed and "'week'" in stored  # "Alice prefers weekly summaries", stemmed
    update = submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(memory.pk),
            "base_revision": memory.revision,
            "changes": {"content": {"statement": "Alice now prefers monthly digests"}},
            "evidence": [make_evidence(agent.agent).binding()],
            "policy_context": owner_context(),
        },
    )
    apply_released(update)
    stored, computed = _stored_and_computed(memory.pk)
    assert stored == computed and "'month'" in stored and "'week'" not in stored


def test_recall_finds_by_the_stored_vector(agent, applied_memory_factory):
    applied_memory_factory(agent)
    found = agent.client.post("/api/v1/recall/search", {"query": "weekly summaries"}, format="json").json()
    assert len(found["results"]) == 1
    assert not agent.client.post("/api/v1/recall/search", {"query": "quarterly"}, format="json").json()[
        "results"
    ]


def test_each_history_row_carries_the_vector_of_what_its_revision_said(agent, applied_memory_factory):
    from tests.factories import apply_released

    memory = applied_memory_factory(agent)
    update = submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(memory.pk),
            "base_revision": memory.revision,
            "changes": {"content": {"statement": "Alice now prefers monthly digests"}},
            "evidence": [make_evidence(agent.agent).binding()],
            "policy_context": owner_context(),
        },
    )
    apply_released(update)
    rows = (
        Memory.history.filter(id=memory.pk)
        .annotate(computed=Cast(search_document(), TextField()), stored=Cast(F("search_vector"), TextField()))
        .order_by("revision")
        .values_list("revision", "stored", "computed")
    )
    assert [(revision, stored == computed) for revision, stored, computed in rows] == [(1, True), (2, True)]
    assert "'week'" in rows[0][1] and "'month'" in rows[1][1]
