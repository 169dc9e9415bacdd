"""The review UI names receipts ("Receipt #<seq> · applied"), linked to their audit page where it opens."""

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from guardian.shortcuts import assign_perm

from executor.models import Receipt
from executor.presenters import receipt_links
from reviews.selectors import AUDIT, DECIDE
from tests.admin.test_read_policy import _update
from tests.factories import (
    apply_released,
    approve,
    create_payload,
    factor_fact,
    make_evidence,
    make_person,
    submit,
)


def _staff_auditor(username, tenant, *perms):
    """Staff in the auditors group, with the given grants on ``tenant``."""
    person = make_person(username, tenant, perms[0])
    for perm in perms[1:]:
        assign_perm(perm, person, tenant)
    person.is_staff = True
    person.save(update_fields=["is_staff"])
    person.groups.add(Group.objects.get(name="auditors"))
    return person


@pytest.fixture
def applied_fact(agent, pm):
    """A factor conclusion approved by ``pm`` and applied: one receipt counting one decision."""
    fact = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    approve(pm, fact, reason="IC decay matches the notebook")
    apply_released(fact)
    return fact


@pytest.fixture
def lead(agent):
    """Decides and audits the tenant, and opens the admin's receipts."""
    return _staff_auditor("lead", agent.tenant, DECIDE, AUDIT)


def _link(receipt) -> str:
    url = reverse("admin:executor_receipt_change", args=[receipt.pk])
    text = f"Receipt #{receipt.seq} · applied"
    return f'<a href="{url}" class="receipt-link" title="The receipt\'s audit page">{text}</a>'


def _plain(receipt) -> str:
    return f'<span class="receipt-ref">Receipt #{receipt.seq} · applied</span>'


def _section(html: str, section_id: str) -> str:
    return html.split(f'id="{section_id}"', 1)[1].split("</section>", 1)[0]


def test_the_proposal_page_links_history_and_decisions_to_the_receipt(client, lead, applied_fact):
    receipt = Receipt.objects.get(proposal=applied_fact)
    client.force_login(lead)
    html = client.get(f"/review/proposals/{applied_fact.pk}/").content.decode()
    history = _section(html, "memory-history")
    assert _link(receipt) in history and "receipt:" not in history
    decisions = _section(html, "decisions")
    assert f"Counted in {_link(receipt)}" in decisions
    assert client.get(reverse("admin:executor_receipt_change", args=[receipt.pk])).status_code == 200


def test_the_receipt_panel_links_the_receipt(client, lead, applied_fact):
    receipt = Receipt.objects.get(proposal=applied_fact)
    client.force_login(lead)
    panel = client.get(f"/review/proposals/{applied_fact.pk}/receipt/").content.decode()
    assert f"<strong>{_link(receipt)}</strong>: memory revision 1." in panel
    assert _link(receipt) in _section(panel, "memory-history")  # the history swapped in with it


def test_a_reviewer_the_admin_would_refuse_reads_the_receipt_unlinked(client, pm, applied_fact):
    receipt = Receipt.objects.get(proposal=applied_fact)
    client.force_login(pm)
    html = client.get(f"/review/proposals/{applied_fact.pk}/").content.decode()
    panel = client.get(f"/review/proposals/{applied_fact.pk}/receipt/").content.decode()
    for page in (html, panel):
        assert _plain(receipt) in page
        assert reverse("admin:executor_receipt_change", args=[receipt.pk]) not in page


def test_another_tenants_auditor_reaches_no_receipt_through_the_links(client, other_agent, applied_fact):
    receipt = Receipt.objects.get(proposal=applied_fact)
    foreign = _staff_auditor("foreign-lead", other_agent.tenant, DECIDE, AUDIT)
    client.force_login(foreign)
    assert client.get(f"/review/proposals/{applied_fact.pk}/").status_code == 404
    assert client.get(f"/review/proposals/{applied_fact.pk}/receipt/").status_code == 404
    audit_page = client.get(reverse("admin:executor_receipt_change", args=[receipt.pk]), follow=True)
    assert f"Receipt #{receipt.seq}" not in audit_page.content.decode()
    assert receipt_links(foreign, [receipt])[str(receipt.pk)].url == ""


def test_the_proposal_page_costs_the_same_queries_with_a_longer_history(
    client, lead, agent, remember, marker
):
    memory = remember(f"{marker} first")
    proposal = Receipt.objects.get(memory_id=memory.pk).proposal
    client.force_login(lead)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(f"/review/proposals/{proposal.pk}/").status_code == 200
        return len(captured)

    few = queries()
    for n in range(3):
        _update(agent, memory, {"content": {"statement": f"{marker} {n}"}})
    html = client.get(f"/review/proposals/{proposal.pk}/").content.decode()
    assert _section(html, "memory-history").count('class="receipt-link"') == 4
    assert queries() == few
