"""An auditor follows one receipt in the admin, in headless Chromium on a 1366 px laptop screen."""

import pytest
from django.contrib.auth.models import Permission, User
from guardian.shortcuts import assign_perm
from playwright.sync_api import expect

from executor.models import Receipt
from reviews.selectors import AUDIT
from tests.factories import apply_released, approve, create_payload, factor_fact, make_evidence, submit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def audited(agent):
    """A decided, applied factor conclusion and an auditor of its tenant."""
    fact = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    pm = User.objects.create_user("pm-alice", password="x")
    assign_perm("tenancy.decide_proposal", pm, agent.tenant)
    approve(pm, fact, reason="IC decay matches the notebook")
    apply_released(fact)
    auditor = User.objects.create_user("auditor-ann", password="auditor-ann-pw", is_staff=True)
    auditor.user_permissions.set(
        Permission.objects.filter(codename__in=["view_receipt", "view_receiptchain"])
    )
    assign_perm(AUDIT, auditor, agent.tenant)
    return Receipt.objects.get(proposal=fact)


def test_auditor_reads_the_receipt_list_and_follows_one_receipt(live_server, browser, audited, artifacts):
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/admin/login/?next=/admin/executor/receipt/")
    page.get_by_label("Username").fill("auditor-ann")
    page.get_by_label("Password").fill("auditor-ann-pw")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("momentum_12_1 shows unstable IC")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366  # no sideways scrolling
    page.screenshot(path=artifacts / "auditor-receipt-list.png", full_page=True)
    page.get_by_role("link", name=audited.created_at.strftime("%Y-%m-%d %H:%M")).click()
    expect(page.get_by_role("heading", name="Policy verdict")).to_be_visible()
    expect(page.get_by_text("IC decay matches the notebook")).to_be_visible()
    page.screenshot(path=artifacts / "auditor-receipt-story.png", full_page=True)
    assert errors == []
