"""Fixtures shared by the recall tests."""

import pytest

from tests.factories import make_evidence


@pytest.fixture
def session(agent, remember):
    """Turns of one conversation session, in the order they are made."""
    evidence = make_evidence(agent.agent, kind="conversation")

    def turn(statement: str, **fields):
        return remember(statement, type="episodic_event", evidence=evidence, **fields)

    return turn
