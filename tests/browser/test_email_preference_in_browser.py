"""A reviewer opens their email settings from the top bar and switches to the daily digest."""

import pytest
from playwright.sync_api import expect

from notifications.models import EmailPreference
from tests.browser.test_pm_journeys import _login, _person

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_reviewer_switches_to_the_daily_digest_and_sees_it_saved(
    live_server, watched_page, agent, artifacts
):
    person = _person("pm-alice", agent.tenant)
    person.email = "alice@desk.example"
    person.save(update_fields=["email"])
    page = watched_page()
    _login(page, live_server.url, "pm-alice")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Email").click()
    expect(page.get_by_role("heading", name="Email notifications", level=1)).to_be_visible()
    expect(page.locator("#email-address")).to_contain_text("alice@desk.example")
    expect(page.locator("#reviewed-tenants")).to_contain_text(agent.tenant.name)
    expect(page.get_by_label("Each proposal at once")).to_be_checked()
    page.screenshot(path=artifacts / "pm-email-preference.png", full_page=True)

    page.get_by_label("One daily digest").check()
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".messages")).to_contain_text("one email a day")
    expect(page.get_by_label("One daily digest")).to_be_checked()
    page.screenshot(path=artifacts / "pm-email-preference-saved.png", full_page=True)
    assert EmailPreference.objects.get(user=person).mode == "digest"
