"""An auditor reads the memory and proposal lists and a memory's timeline on a 1366 px laptop screen."""

import pytest
from django.contrib.auth.models import Group, User
from guardian.shortcuts import assign_perm
from playwright.sync_api import expect

from reviews.selectors import AUDIT
from tests.admin.conftest import ORG_FACT
from tests.admin.test_read_policy import _update
from tests.factories import create_payload, make_evidence, owner_context, submit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG = (
    "Alice prefers weekly summaries on Mondays, with the factor exposures first and the drawdown table last"
)


@pytest.fixture
def desk(agent, remember):
    """A desk's memories in every view an auditor gets, a pending proposal, and an auditor of the desk."""
    weekly = remember(LONG)
    _update(agent, weekly, {"content": {"statement": "Alice prefers summaries every second Monday"}})
    leave = remember("Alice's medical leave starts in May", sensitivity="restricted", dedupe_key="leave")
    remember("Alice earns a bonus tied to the desk's Sharpe", sensitivity="confidential")
    memory = {
        **ORG_FACT,
        "content": {"statement": "momentum_12_1 shows unstable IC"},
        "sensitivity": "internal",
    }
    submit(agent.agent, create_payload(memory, [make_evidence(agent.agent)], owner_context()))
    auditor = User.objects.create_user("auditor-ann", password="auditor-ann-pw", is_staff=True)
    auditor.groups.add(Group.objects.get(name="auditors"))
    assign_perm(AUDIT, auditor, agent.tenant)
    return {"weekly": weekly, "leave": leave}


def _sign_in(page, base: str, path: str) -> None:
    page.goto(f"{base}/admin/login/?next={path}")
    page.get_by_label("Username").fill("auditor-ann")
    page.get_by_label("Password").fill("auditor-ann-pw")
    page.get_by_role("button", name="Sign in").click()


def _fits(page) -> None:
    """No sideways scrolling: neither the page nor the list's own scrolling box (``.results``)."""
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    assert page.evaluate(
        "[...document.querySelectorAll('.results')].every(box => box.scrollWidth <= box.clientWidth)"
    )


def test_an_auditor_reads_the_memory_and_proposal_lists_and_a_timeline(
    live_server, watched_page, desk, artifacts
):
    page = watched_page()
    _sign_in(page, live_server.url, "/admin/memory_core/memory/")
    rows = page.locator("#result_list tbody tr")
    expect(rows).to_have_count(3)
    expect(page.locator("#result_list")).to_contain_text("“Alice prefers summaries every second Monday”")
    expect(page.get_by_text("Details withheld, metadata only")).to_be_visible()
    expect(page.get_by_text("Masked, text hidden")).to_be_visible()
    expect(page.locator("#result_list")).not_to_contain_text("medical leave")
    expect(page.locator("#action-toggle")).to_have_count(0)  # no checkboxes, no action menu
    expect(page.locator('select[name="action"]')).to_have_count(0)
    page.screenshot(path=artifacts / "auditor-admin-memory-list.png", full_page=True)
    _fits(page)

    # searching the words of a withheld statement finds nothing; the subject finds every row
    page.get_by_role("textbox", name="Search").fill("medical leave")
    page.get_by_role("button", name="Search").click()
    expect(rows).to_have_count(0)
    page.get_by_role("textbox", name="Search").fill("pm-alice")
    page.get_by_role("button", name="Search").click()
    expect(rows).to_have_count(3)

    page.goto(f"{live_server.url}/admin/proposals/proposal/")
    expect(page.locator("#result_list")).to_contain_text("“momentum_12_1 shows unstable IC”")
    expect(page.locator("#result_list")).to_contain_text("pending review")
    expect(page.locator("#result_list")).not_to_contain_text("medical leave")
    expect(page.locator("#action-toggle")).to_have_count(0)
    page.screenshot(path=artifacts / "auditor-admin-proposal-list.png", full_page=True)
    _fits(page)

    page.goto(f"{live_server.url}/admin/executor/receipt/memory/{desk['weekly'].pk}/")
    expect(page.get_by_role("heading", level=1)).to_have_text("user:pm-alice · preference")
    expect(page.locator(".memory-id")).to_have_text(f"Timeline of memory {desk['weekly'].pk}")
    expect(page.locator(".timeline-table")).to_contain_text(
        "1 → 2 “Alice prefers summaries every second Monday”"
    )
    page.screenshot(path=artifacts / "auditor-admin-memory-timeline.png", full_page=True)
    _fits(page)


def test_a_withheld_memory_s_timeline_says_so_in_words(live_server, watched_page, desk, artifacts):
    page = watched_page()
    _sign_in(page, live_server.url, f"/admin/executor/receipt/memory/{desk['leave'].pk}/")
    expect(page.get_by_role("heading", level=1)).to_have_text("user:pm-alice · preference")
    expect(page.locator(".timeline-table")).to_contain_text("Revision: details withheld, metadata only")
    expect(page.locator(".timeline-table")).not_to_contain_text("medical leave")
    page.screenshot(path=artifacts / "auditor-admin-withheld-timeline.png", full_page=True)
    _fits(page)
