import copy

import pytest
from django.core.management import call_command
from guardian.shortcuts import assign_perm

from registrations.document import DEFAULT_DOCUMENT
from tests.factories import make_person

PUBLISH = "tenancy.publish_registration"


@pytest.fixture
def operator(agent):
    """The operator who drafts and asks to publish (may publish, so never approves their own)."""
    person = make_person("operator", agent.tenant)
    assign_perm(PUBLISH, person, agent.tenant)
    return person


@pytest.fixture
def publisher(agent):
    """A reviewer who may decide and publish in the agent's tenant."""
    person = make_person("publisher", agent.tenant)
    assign_perm(PUBLISH, person, agent.tenant)
    return person


def with_sector() -> dict:
    """The default registration plus one optional property on semantic facts (additive)."""
    document = copy.deepcopy(DEFAULT_DOCUMENT)
    entry = document["types"]["semantic_fact"]
    entry["schema"]["properties"]["sector"] = {"type": "string", "minLength": 1, "maxLength": 100}
    entry["labels"]["sector"] = "Sector"
    return document


def command(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("registration", *args, stdout=out)
    return out.getvalue()
