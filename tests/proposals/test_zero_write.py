"""Submitting a proposal, whatever its verdict, writes no memory and no memory history."""

import pytest

from memory_core.models import Memory, MemoryEvidence
from tests.factories import create_payload, factor_fact, make_evidence, owner_context, submit, user_preference


def _memory_tables():
    return (
        list(Memory.objects.values()),
        list(Memory.history.values()),
        list(MemoryEvidence.objects.values()),
    )


@pytest.mark.parametrize(
    "memory",
    [
        user_preference(),  # auto_apply
        user_preference(type="episodic_event", content={"statement": "run finished"}),  # gated
        factor_fact(),  # review
        user_preference(sensitivity="restricted"),  # review x2
    ],
    ids=["auto", "gated", "review", "restricted"],
)
def test_submitting_writes_no_memory(agent, django_capture_on_commit_callbacks, memory):
    before = _memory_tables()
    with django_capture_on_commit_callbacks(execute=False):
        submit(agent.agent, create_payload(memory, [make_evidence(agent.agent)], owner_context()))
    assert _memory_tables() == before == ([], [], [])


def test_submitting_an_update_leaves_the_memory_and_its_history_unchanged(agent, applied_memory):
    before = _memory_tables()
    submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(applied_memory.id),
            "base_revision": applied_memory.revision,
            "changes": {"content": {"statement": "Alice prefers daily summaries"}},
            "evidence": [make_evidence(agent.agent).binding()],
            "policy_context": owner_context(),
        },
    )
    assert _memory_tables() == before
