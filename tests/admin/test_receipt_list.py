"""The receipt list reads as sentences, through the read policy, at a constant number of queries."""

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from executor.models import Receipt
from executor.services import apply_entries
from proposals.models import OutboxEntry
from tests.admin.conftest import ORG_FACT
from tests.factories import create_payload, make_evidence, submit, user_preference

LIST = "admin:executor_receipt_changelist"


def _row_text(client) -> str:
    response = client.get(reverse(LIST))
    assert response.status_code == 200
    return response.content.decode()


def test_a_row_says_what_changed_who_proposed_decided_and_on_what(auditor_client, agent, remember, marker):
    remember(f"momentum {marker} is unstable", **ORG_FACT)
    page = _row_text(auditor_client)
    assert f"“momentum {marker} is unstable”" in page
    assert "<strong>create semantic fact</strong>" in page
    assert agent.agent.name in page
    assert '<span title="approve: ok">rev-a</span>' in page


def test_a_confidential_statement_is_masked_in_the_list(auditor_client, remember, marker):
    remember(f"Alice earns {marker}", sensitivity="confidential")
    page = _row_text(auditor_client)
    assert marker not in page


def test_a_restricted_statement_is_withheld_in_the_list(auditor_client, remember, marker):
    remember(f"Alice's diagnosis {marker}", sensitivity="restricted")
    page = _row_text(auditor_client)
    assert marker not in page
    assert "Details withheld, metadata only" in page


def test_another_tenants_receipts_are_not_listed(auditor_client, other_agent, remember, marker):
    remember(f"foreign {marker}", handle=other_agent)
    page = _row_text(auditor_client)
    assert marker not in page and other_agent.tenant.name not in page


def _queries(client) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse(LIST)).status_code == 200
    return len(queries)


def test_the_list_costs_the_same_queries_with_more_decided_receipts(auditor_client, remember, marker):
    remember(f"first {marker}", **ORG_FACT)
    few = _queries(auditor_client)
    for n in range(4):
        remember(f"more {n} {marker}", dedupe_key=f"more-{n}", **ORG_FACT)
    assert _queries(auditor_client) == few


def test_the_newest_receipt_comes_first(auditor_client, remember, marker):
    """As audit consoles list events (and along an index: the list never sorts the whole table)."""
    remember(f"older {marker}", **ORG_FACT)
    remember(f"newer {marker}", dedupe_key="newer", **ORG_FACT)
    page = _row_text(auditor_client)
    assert page.index(f"newer {marker}") < page.index(f"older {marker}")


def test_receipts_written_together_are_listed_in_chain_order(auditor_client, agent, marker):
    """One batch stamps its receipts with one created_at: only ``seq`` orders them."""
    evidence = [make_evidence(agent.agent)]
    proposals = [
        submit(
            agent.agent,
            create_payload(
                user_preference(content={"statement": f"{marker} {n}", "preference_key": f"k{n}"}), evidence
            ),
        )
        for n in range(6)
    ]
    entries = OutboxEntry.objects.filter(proposal__in=proposals).values_list("id", flat=True)
    apply_entries(entry_ids=list(entries), worker={"host": "test", "pid": 1, "task_id": "batch"})
    receipts = Receipt.objects.filter(tenant=agent.tenant)
    assert receipts.values("created_at").distinct().count() == 1
    page = _row_text(auditor_client)
    seqs = [int(seq) for seq in re.findall(r'<span class="quiet">#(\d+)</span>', page)]
    assert seqs == sorted(receipts.values_list("seq", flat=True), reverse=True)
