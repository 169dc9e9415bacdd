"""A subject with memories to erase, and the people who review erasures."""

import uuid

import pytest

from tenancy.services import grant_delegation
from tests.factories import make_person


@pytest.fixture
def subject(agent) -> dict:
    """A person the agent holds a grant to act for, named by an id found nowhere else."""
    subject = {"kind": "user", "id": f"subj{uuid.uuid4().hex}"}
    grant_delegation(agent=agent.agent, subject=subject)
    return subject


@pytest.fixture
def reviewers(agent) -> list:
    return [make_person(f"erasure-rev-{n}", agent.tenant) for n in range(2)]


@pytest.fixture
def about(remember, subject, marker):
    """Make memories about ``subject`` whose statements carry ``marker``; return them."""

    def make(count: int = 3, **fields) -> list:
        return [
            remember(f"{marker} prefers summary number {n} on fridays", subject=subject, **fields)
            for n in range(count)
        ]

    return make


def ask(api, subject, reason="the person asked to be forgotten", key=None):
    """Ask for the erasure over HTTP, as an agent would; return the response."""
    return api.post(
        "/api/v1/erasures/",
        {"subject": subject, "reason": reason},
        format="json",
        HTTP_IDEMPOTENCY_KEY=key or f"erase-{uuid.uuid4()}",
    )
