"""The memory and proposal lists read as rows about someone, through the read policy, and search safely."""

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memory_core.models import Memory
from proposals.models import Proposal
from proposals.people import proposed_for_person, with_facts_as_read
from proposals.presenters import target_memories, tenant_target
from provenance.services import invalidate_evidence_revision
from tests.admin.conftest import ORG_FACT
from tests.admin.test_read_policy import _update
from tests.factories import create_payload, make_evidence, make_person, owner_context, submit
from tests.lifecycle.test_lifecycle_verbs import drive

MEMORIES = "admin:memory_core_memory_changelist"
PROPOSALS = "admin:proposals_proposal_changelist"
WITHHELD = '<em class="quiet" title="metadata_only">Details withheld, metadata only</em>'
MASKED = '<em class="quiet" title="masked">Masked, text hidden</em>'


def _page(client, name: str, q: str = "") -> str:
    response = client.get(reverse(name), {"q": q} if q else {})
    assert response.status_code == 200
    return response.content.decode()


def _found(client, name: str, q: str) -> set:
    response = client.get(reverse(name), {"q": q})
    assert response.status_code == 200
    return {row.pk for row in response.context["cl"].result_list}


def _pending(agent, statement: str, **fields) -> Proposal:
    """A proposal waiting for review (a shared fact needs an approval), so no memory exists yet."""
    memory = {**ORG_FACT, "content": {"statement": statement}, "sensitivity": "internal", **fields}
    return submit(agent.agent, create_payload(memory, [make_evidence(agent.agent)], owner_context()))


# What a row shows ----------------------------------------------------------------------------


def test_a_memory_row_shows_subject_type_state_and_statement(auditor_client, remember, marker):
    remember(f"Alice prefers {marker} summaries on Mondays")
    page = _page(auditor_client, MEMORIES)
    assert '<span title="user:pm-alice">user:pm-alice</span>' in page
    assert '<td class="field-kind">preference</td>' in page
    assert '<td class="field-state_now">active<br><span class="quiet">revision 1</span></td>' in page
    assert f"“Alice prefers {marker} summaries on Mondays”" in page


def test_a_long_statement_is_cut_to_eighty_characters(auditor_client, remember, marker):
    statement = f"{marker} " + "word " * 40
    remember(statement)
    page = _page(auditor_client, MEMORIES)
    assert f"“{statement[:79]}…”" in page
    assert statement[:90] not in page


def test_a_restricted_memory_row_says_in_words_that_its_details_are_withheld(
    auditor_client, remember, marker
):
    remember(f"Alice's diagnosis {marker}", sensitivity="restricted", dedupe_key=f"{marker}-key")
    page = _page(auditor_client, MEMORIES)
    assert marker not in page
    assert WITHHELD in page


def test_a_confidential_memory_row_says_it_is_masked(auditor_client, remember, marker):
    remember(f"Alice earns {marker}", sensitivity="confidential")
    page = _page(auditor_client, MEMORIES)
    assert marker not in page
    assert MASKED in page


def test_a_proposal_row_shows_subject_type_action_status_and_statement(auditor_client, agent, marker):
    _pending(agent, f"momentum {marker} is unstable")
    page = _page(auditor_client, PROPOSALS)
    assert '<span title="org:quant-desk">org:quant-desk</span>' in page
    assert '<td class="field-kind">semantic fact</td>' in page
    assert '<td class="field-state_now">create<br><span class="quiet">pending review</span></td>' in page
    assert f"“momentum {marker} is unstable”" in page


def test_a_restricted_proposal_row_says_its_details_are_withheld(auditor_client, agent, marker):
    _pending(agent, f"the desk's losses {marker}", sensitivity="restricted")
    page = _page(auditor_client, PROPOSALS)
    assert marker not in page
    assert WITHHELD in page


def test_a_proposal_row_follows_its_memory_restricted_since(auditor_client, agent, remember, marker):
    """Written as internal, the memory is restricted now: the stricter view wins, as on its page."""
    memory = remember(f"{marker} internal then")
    _update(agent, memory, {"sensitivity": "restricted"})
    page = _page(auditor_client, PROPOSALS)
    assert marker not in page
    assert WITHHELD in page


def test_another_tenants_memories_and_proposals_are_not_listed(auditor_client, other_agent, remember, marker):
    remember(f"foreign {marker}", handle=other_agent)
    _pending(other_agent, f"foreign pending {marker}")
    for name in (MEMORIES, PROPOSALS):
        page = _page(auditor_client, name)
        assert marker not in page and other_agent.tenant.name not in page


# Search ----------------------------------------------------------------------------------------


def test_memories_are_found_by_subject_id_type_and_statement(auditor_client, remember, marker):
    shown = remember(f"Alice likes {marker} charts")
    fact = remember(f"desk fact {marker}", **ORG_FACT)
    assert _found(auditor_client, MEMORIES, "pm-alice") == {shown.pk}
    assert _found(auditor_client, MEMORIES, "semantic_fact") == {fact.pk}
    assert _found(auditor_client, MEMORIES, f"{marker} charts") == {shown.pk}
    assert _found(auditor_client, MEMORIES, f"pm-alice {marker}") == {shown.pk}  # metadata and words


def test_searching_a_withheld_statement_tells_nothing_of_which_memory_holds_it(
    auditor_client, remember, marker
):
    remember(f"Alice's diagnosis {marker}", sensitivity="restricted", dedupe_key=f"{marker}-dx")
    remember(f"Alice earns {marker}", sensitivity="confidential")
    remember("Alice prefers tea")
    assert _found(auditor_client, MEMORIES, marker) == set()
    assert _found(auditor_client, MEMORIES, f"diagnosis {marker}") == set()
    assert _found(auditor_client, MEMORIES, f"pm-alice {marker}") == set()
    assert _found(auditor_client, MEMORIES, f"{marker}-dx") == set()  # the dedupe key is content too


def test_a_memory_withheld_since_it_was_written_is_not_found_by_its_words(
    auditor_client, agent, remember, marker
):
    memory = remember(f"{marker} internal once")
    assert _found(auditor_client, MEMORIES, marker) == {memory.pk}
    _update(agent, memory, {"sensitivity": "restricted"})
    assert _found(auditor_client, MEMORIES, marker) == set()


def test_proposals_are_found_by_subject_id_type_and_statement(auditor_client, agent, marker):
    pending = _pending(agent, f"momentum {marker} decays")
    assert pending.pk in _found(auditor_client, PROPOSALS, "quant-desk")
    assert pending.pk in _found(auditor_client, PROPOSALS, "semantic_fact")
    assert _found(auditor_client, PROPOSALS, f"{marker} decays") == {pending.pk}


def test_searching_a_withheld_proposal_statement_finds_nothing(auditor_client, agent, remember, marker):
    _pending(agent, f"the desk's losses {marker}", sensitivity="restricted")
    memory = remember(f"{marker} internal then")
    _update(agent, memory, {"sensitivity": "restricted"})  # its create proposal is withheld now
    assert _found(auditor_client, PROPOSALS, marker) == set()
    assert _found(auditor_client, PROPOSALS, f"quant-desk {marker}") == set()


def test_another_tenants_rows_are_never_found(auditor_client, other_agent, remember, marker):
    remember(f"foreign {marker}", handle=other_agent)
    _pending(other_agent, f"foreign pending {marker}")
    assert _found(auditor_client, MEMORIES, marker) == set()
    assert _found(auditor_client, PROPOSALS, marker) == set()


def test_the_proposal_search_reads_each_proposal_as_its_page_does(agent, remember, marker):
    """``with_facts_as_read`` (SQL) agrees with ``proposed_for_person`` for creates, updates and targets."""
    remember(f"{marker} internal")
    remember(f"{marker} confidential", sensitivity="confidential")
    restricted_since = remember(f"{marker} restricted since")
    _update(agent, restricted_since, {"sensitivity": "restricted"})
    opened = remember(f"{marker} public since", sensitivity="confidential")
    _update(agent, opened, {"sensitivity": "public"})
    _pending(agent, f"{marker} pending")
    _pending(agent, f"{marker} pending restricted", sensitivity="restricted")
    drive(agent, remember(f"{marker} deleted"), "delete", [make_person("deleter", agent.tenant)])
    evidence = make_evidence(agent.agent)
    remember(f"{marker} fenced", evidence=evidence)
    invalidate_evidence_revision(revision=evidence, reason="look-ahead bug")
    proposals = list(Proposal.objects.all())
    current = target_memories(proposals)
    expected = {
        proposal.pk: proposed_for_person(proposal, tenant_target(proposal, current))[1].mode == "raw"
        for proposal in proposals
    }
    read = with_facts_as_read(Proposal.objects.all()).annotate(read=F("read_in_full"))
    found = dict(read.values_list("pk", "read"))
    assert found == expected
    assert set(expected.values()) == {True, False}


# Queries ---------------------------------------------------------------------------------------


def _queries(client, name: str, q: str = "") -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse(name), {"q": q} if q else {}).status_code == 200
    return len(queries)


@pytest.mark.parametrize("q", ["", "pm-alice"])
def test_the_lists_cost_the_same_queries_for_one_row_as_for_ten(auditor_client, agent, remember, q):
    remember("Alice prefers tea")
    one = {name: _queries(auditor_client, name, q) for name in (MEMORIES, PROPOSALS)}
    for n in range(9):
        sensitivity = ("internal", "confidential", "restricted")[n % 3]
        remember(f"Alice prefers tea number {n}", sensitivity=sensitivity)
    assert Memory.objects.count() == 10
    assert {name: _queries(auditor_client, name, q) for name in (MEMORIES, PROPOSALS)} == one
