"""PostgreSQL: the executor role alone runs the compaction sweep, applies it, re-proposes after a purge."""

import pytest
from django.core.management import call_command

from executor.audit import memory_problems
from executor.models import Receipt
from maintenance.compaction import propose_compactions
from memory_core.models import Memory, MemoryLineage
from proposals.models import Proposal
from tests.executor.test_roles_run_the_app import _drain, connected_as
from tests.factories import approve, make_person, submit
from tests.maintenance.test_compaction import _four, capacity  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_the_executor_role_compacts_and_re_proposes_after_a_purge(agent, capacity, remember):  # noqa: F811
    call_command("setup_db_roles", verbosity=0)
    _four(remember, "zqrolecompact")
    with connected_as("custodian_executor"):
        assert propose_compactions() == 1
        assert _drain() == 1
    proposal = Proposal.objects.get(action="compact")
    assert Receipt.objects.get(proposal=proposal).outcome == "applied"
    gone = Memory.objects.get(pk=proposal.fields["members"][0]["memory_id"])

    people = [make_person(f"p{n}", agent.tenant) for n in range(2)]
    for verb in ("delete", "purge"):
        gone.refresh_from_db()
        step = submit(
            agent.agent,
            {"action": verb, "memory_id": str(gone.id), "base_revision": gone.revision, "reason": "erase"},
        )
        for person in people[: step.required_approvals]:
            approve(person, step)
        with connected_as("custodian_executor"):
            _drain()  # the purge writes the re-summary proposal in its own transaction
    assert not Memory.objects.filter(pk=gone.pk).exists()
    assert MemoryLineage.objects.filter(successor_id=proposal.target_id).count() == 1
    with connected_as("custodian_executor"):
        _drain()
    resummary = Proposal.objects.get(action="update", target_id=proposal.target_id)
    assert resummary.status == "applied"
    assert memory_problems(agent.tenant.id) == []
