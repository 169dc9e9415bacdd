import uuid

import pytest

from memory_core.models import Memory
from reviews.services import record_decision
from tests.factories import apply_released, create_payload, make_evidence, owner_context, submit
from tests.reviews.conftest import make_person


@pytest.fixture
def marker() -> str:
    return f"zq{uuid.uuid4().hex[:12]}"


@pytest.fixture
def remember(agent):
    """Return a function that makes a memory exist through proposal, approvals and executor."""
    reviewers = [make_person("rev-a", agent.tenant), make_person("rev-b", agent.tenant)]

    def make(statement: str, *, handle=None, **fields) -> Memory:
        handle = handle or agent
        memory = {
            "subject": {"kind": "user", "id": "pm-alice"},
            "scope": "user",
            "type": "preference",
            "content": {"statement": statement},
            "sensitivity": "internal",
            **fields,
        }
        proposal = submit(
            handle.agent, create_payload(memory, [make_evidence(handle.agent)], owner_context())
        )
        people = (
            reviewers
            if handle is agent
            else [make_person(f"r-{uuid.uuid4().hex[:6]}", handle.tenant) for _ in range(2)]
        )
        for person in people[: proposal.required_approvals]:
            record_decision(
                actor=person,
                proposal_id=proposal.pk,
                decision="approve",
                reason="ok",
                represented_owner="desk",
                action_digest=proposal.action_digest,
                channel="api",
            )
        assert apply_released(proposal).outcome == "applied"
        return Memory.objects.get(pk=proposal.target_memory_id)

    return make
