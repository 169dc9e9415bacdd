"""A PM's pages read as a person expects: a create is new, whom you decide for is a choice, times are words.

Each test fails on any browser console error (``watched_page``); screenshots go to test-artifacts/.
"""

import re

import pytest
from playwright.sync_api import expect

from reviews.models import ReviewDecision
from tests.browser.test_pm_journeys import _fact, _login, _person, _row
from tests.factories import approve

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_create_reads_as_new_and_deciding_for_is_a_choice(live_server, watched_page, agent, artifacts):
    fact = _fact(agent, "momentum_12_1 IC is 0.021 after neutralisation", sensitivity="restricted")
    _person("pm-alice", agent.tenant)
    page = watched_page()
    _login(page, live_server.url, "pm-alice")
    expect(_row(page, fact).locator("time")).to_have_text("just now")
    _row(page, fact).locator("a.open").click()

    diff = page.locator("#diff")
    expect(diff.locator("caption")).to_contain_text("A new memory: nothing exists yet")
    expect(diff.get_by_role("columnheader")).to_have_text(["Field", "New value"])  # no empty "Current"
    expect(diff).not_to_contain_text("—")
    owner = page.get_by_label("Deciding for")
    expect(owner.locator("option")).to_have_text(
        ["user:pm-alice (the agent acts for)", "org:quant-desk (the memory is about)", "yourself (pm-alice)"]
    )
    expect(owner).to_have_value("user:pm-alice")
    page.screenshot(path=artifacts / "pm-create-reads-new.png", full_page=True)

    owner.select_option(label="org:quant-desk (the memory is about)")
    page.get_by_label("Approve").check()
    page.get_by_label("Reason (required)").fill("IC matches the neutralised run")
    page.get_by_role("button", name="Record decision").click()
    expect(page.locator("#already-decided")).to_contain_text("on this version just now;")
    expect(page.locator("#decisions")).to_contain_text("for org:quant-desk on version 1, just now")
    page.screenshot(path=artifacts / "pm-decided-just-now.png", full_page=True)
    assert ReviewDecision.objects.get(proposal=fact).represented_owner == "org:quant-desk"


def test_your_dashboard_counts_your_decisions_on_whole_gridlines(live_server, watched_page, agent, artifacts):
    alice, bob = _person("pm-alice", agent.tenant), _person("pm-bob", agent.tenant)
    for n in range(3):
        approve(alice, _fact(agent, f"reading {n} of the IC", dedupe_key=f"a{n}"))
    for n in range(2):
        approve(bob, _fact(agent, f"another reading {n}", dedupe_key=f"b{n}"))
    page = watched_page()
    _login(page, live_server.url, "pm-alice")
    page.get_by_role("link", name="Dashboard").click()
    expect(page.locator("#decided-7")).to_have_text("3")  # bob's two are his, not hers
    expect(page.locator("#outcomes-chart text.tick")).to_have_text(["0", "1", "2", "3"])
    chart = page.get_by_role("img", name=re.compile("Your decisions per day"))
    expect(chart).to_be_visible()
    chart.scroll_into_view_if_needed()
    page.screenshot(path=artifacts / "pm-dashboard-own-decisions.png", full_page=True)
