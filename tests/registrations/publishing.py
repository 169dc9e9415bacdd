"""Publish a changed registration the governed way (a request, a second person's approval, the executor)."""

import copy
import itertools
from collections.abc import Callable

from guardian.shortcuts import assign_perm

from registrations.document import DEFAULT_DOCUMENT
from tests.factories import apply_released, approve, make_person
from tests.registrations.test_publish import _requested

_people = itertools.count()


def publish_changed_default(agent, change: Callable[[dict], None]) -> None:
    """Publish the default registration after ``change(document)`` for ``agent``'s tenant."""
    n = next(_people)
    operator = make_person(f"reg-operator-{n}", agent.tenant)
    publisher = make_person(f"reg-publisher-{n}", agent.tenant)
    for person in (operator, publisher):
        assign_perm("tenancy.publish_registration", person, agent.tenant)
    document = copy.deepcopy(DEFAULT_DOCUMENT)
    change(document)
    _, proposal = _requested(agent, operator, document)
    approve(publisher, proposal)
    assert apply_released(proposal).outcome == "applied"
