"""An auditor and a lead who also decides find the receipts from the review UI, in Chromium at 1366 px."""

import pytest
from django.contrib.auth.models import Group, Permission, User
from guardian.shortcuts import assign_perm
from playwright.sync_api import expect

from executor.models import Receipt
from executor.services import apply_entries
from proposals.models import OutboxEntry
from reviews.selectors import AUDIT, DECIDE
from tests.factories import (
    apply_released,
    approve,
    create_payload,
    factor_fact,
    make_evidence,
    submit,
    user_preference,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def audited(agent):
    """A decided, applied factor conclusion (a create); an auditor and a lead of its tenant."""
    evidence = make_evidence(agent.agent)
    fact = submit(agent.agent, create_payload(factor_fact(), [evidence]))
    pm = User.objects.create_user("pm-alice", password="x")
    assign_perm(DECIDE, pm, agent.tenant)
    approve(pm, fact, reason="IC decay matches the notebook")
    apply_released(fact)
    auditor = User.objects.create_user("auditor-ann", password="auditor-ann-pw", is_staff=True)
    auditor.user_permissions.set(
        Permission.objects.filter(codename__in=["view_receipt", "view_receiptchain"])
    )
    assign_perm(AUDIT, auditor, agent.tenant)
    lead = User.objects.create_user("lead-lee", password="lead-lee-pw", is_staff=True)
    lead.groups.add(Group.objects.get(name="auditors"))
    assign_perm(DECIDE, lead, agent.tenant)
    assign_perm(AUDIT, lead, agent.tenant)
    return Receipt.objects.get(proposal=fact), evidence


def _apply_one_batch(agent, count: int) -> None:
    """Apply ``count`` preferences in one executor batch: their receipts share one created_at."""
    evidence = [make_evidence(agent.agent)]
    proposals = [
        submit(
            agent.agent,
            create_payload(
                user_preference(
                    content={"statement": f"Alice prefers digest {n}", "preference_key": f"d{n}"}
                ),
                evidence,
            ),
        )
        for n in range(count)
    ]
    entries = list(OutboxEntry.objects.filter(proposal__in=proposals).values_list("id", flat=True))
    apply_entries(entry_ids=entries, worker={"host": "browser-test", "pid": 1, "task_id": "batch"})


def _sign_in_at_review(page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/review/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_an_auditor_lands_on_the_receipts_and_reads_a_create(live_server, watched_page, audited, artifacts):
    receipt, evidence = audited
    page = watched_page()
    _sign_in_at_review(page, live_server.url, "auditor-ann", "auditor-ann-pw")
    expect(page).to_have_url(f"{live_server.url}/admin/executor/receipt/")
    expect(page.get_by_text("momentum_12_1 shows unstable IC")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    page.screenshot(path=artifacts / "auditor-receipts-landing.png", full_page=True)

    page.locator(f'a[href$="/admin/executor/receipt/{receipt.pk}/change/"]').first.click()
    expect(page.get_by_role("heading", name="What changed (created at revision 1)")).to_be_visible()
    row = page.locator("tr.evidence-cited")
    expect(row).to_contain_text("backtest run")
    expect(row).to_contain_text(evidence.source.external_ref)
    expect(row).to_contain_text("revision 1")
    expect(row.get_by_role("link")).to_have_count(0)  # this auditor may not open the evidence pages
    page.screenshot(path=artifacts / "auditor-receipts-create-plain-evidence.png", full_page=True)


def test_a_lead_sees_the_glyph_the_nav_and_follows_the_receipt_panel(
    live_server, watched_page, audited, agent, artifacts
):
    receipt, evidence = audited
    page = watched_page()
    _sign_in_at_review(page, live_server.url, "lead-lee", "lead-lee-pw")
    expect(page).to_have_url(f"{live_server.url}/review/")
    expect(page.get_by_text("Nothing waiting for you.")).to_be_visible()
    glyph = page.locator("svg.empty-glyph")
    expect(glyph).to_be_visible()
    box = glyph.bounding_box()
    assert box is not None and box["width"] >= 30 and box["height"] >= 30
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Receipts")).to_have_attribute("href", "/admin/executor/receipt/")
    expect(nav.get_by_role("link", name="Chain")).to_have_attribute("href", "/admin/executor/receiptchain/")
    page.screenshot(path=artifacts / "lead-empty-queue-with-glyph.png")

    _apply_one_batch(agent, 3)
    nav.get_by_role("link", name="Receipts").click()
    expect(page.get_by_text("momentum_12_1 shows unstable IC")).to_be_visible()
    seqs = [int(text.lstrip("#")) for text in page.locator(".field-when .quiet").all_inner_texts()]
    assert seqs == [4, 3, 2, 1]  # chain order, newest first, though the batch shares one created_at
    page.screenshot(path=artifacts / "lead-receipt-list.png", full_page=True)

    page.goto(f"{live_server.url}/review/proposals/{receipt.proposal_id}/")
    name = f"Receipt #{receipt.seq} · applied"
    panel_link = page.locator("#receipt").get_by_role("link", name=name)
    expect(panel_link).to_be_visible()
    expect(page.locator("#memory-history").get_by_role("link", name=name)).to_be_visible()
    expect(page.locator("#decisions").get_by_role("link", name=name)).to_be_visible()
    page.screenshot(path=artifacts / "lead-proposal-receipt-panel.png", full_page=True)

    panel_link.click()
    expect(page).to_have_url(f"{live_server.url}/admin/executor/receipt/{receipt.pk}/change/")
    expect(page.get_by_role("heading", name="What changed (created at revision 1)")).to_be_visible()
    row = page.locator("tr.evidence-cited")
    expect(row.get_by_role("link", name=evidence.source.external_ref)).to_be_visible()
    expect(row.get_by_role("link", name="revision 1")).to_be_visible()
    expect(row).to_contain_text("backtest run")
    page.screenshot(path=artifacts / "lead-receipt-create-page.png", full_page=True)
