import copy

import pytest
from guardian.shortcuts import assign_perm

from registrations.document import DEFAULT_DOCUMENT
from tests.factories import apply_released, approve, make_person
from tests.registrations.test_publish import _requested


@pytest.fixture
def dreaming_mode(agent):
    """Publish a registration that routes Dreaming on the given types in the given mode."""

    def publish(mode: str, *types: str) -> None:
        operator, publisher = (
            make_person("d-operator", agent.tenant),
            make_person("d-publisher", agent.tenant),
        )
        for person in (operator, publisher):
            assign_perm("tenancy.publish_registration", person, agent.tenant)
        document = copy.deepcopy(DEFAULT_DOCUMENT)
        for memory_type in types or ("preference",):
            document["types"][memory_type]["dreaming"] = {"mode": mode}
        _, proposal = _requested(agent, operator, document)
        approve(publisher, proposal)
        assert apply_released(proposal).outcome == "applied"

    return publish


@pytest.fixture
def dream_reviewers(agent):
    return [make_person("dream-rev-a", agent.tenant), make_person("dream-rev-b", agent.tenant)]
