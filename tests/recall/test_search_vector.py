"""The stored search vector is the search document, kept current by the database on every write."""

import pytest
from django.db.models import F, FloatField, IntegerField, TextField
from django.db.models.functions import Cast

from memory_core.models import Memory
from memory_core.search import Matched, search_document
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


def test_matched_sums_what_the_groups_a_vector_holds_are_worth_and_normalises_by_its_length(
    agent, applied_memory_factory
):
    memory = applied_memory_factory(agent)  # "Alice prefers weekly summaries": four lexemes
    rows = Memory.objects.filter(pk=memory.pk).alias(document=F("search_vector"))
    groups = [({"week"}, 1), ({"month"}, 2), ({"digest", "summari"}, 4), ({"o'brien\\"}, 8)]
    held = rows.annotate(held=Matched("document", groups, IntegerField()))
    assert held.values_list("held", flat=True).get() == 1 | 4  # a quote or backslash is a literal
    rank = rows.annotate(
        rank=Matched(
            "document", [({"week"}, 2.5), ({"month"}, 7.0)], FloatField(), length_norm=(2.2, 0.3, 0.5)
        )
    )
    assert rank.values_list("rank", flat=True).get() == pytest.approx(2.5 * 2.2 / (0.3 + 0.5 * 4))
