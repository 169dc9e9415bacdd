"""A reviewer opens a Dreaming run in headless Chromium, reads its window and plan, and approves an action."""

import re

import pytest
from django.contrib.auth.models import User
from guardian.shortcuts import assign_perm
from playwright.sync_api import expect

from maintenance.dreaming.runs import dreaming_pass
from proposals.models import DreamingRun, Proposal
from reviews.selectors import DECIDE
from tests.factories import apply_released

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_reviewer_approves_an_action_from_the_run_page(
    live_server, watched_page, agent, remember, artifacts
):
    survivor = remember("Alice prefers weekly summaries on Mondays")
    remember("alice prefers weekly summaries on mondays.")
    dreaming_pass()
    run = DreamingRun.objects.get()
    dormant = Proposal.objects.get(dreaming_run=run, action="dormant")
    user = User.objects.create_user("pm-dreamer", password="pm-dreamer-pw")
    assign_perm(DECIDE, user, agent.tenant)

    page = watched_page()
    page.goto(f"{live_server.url}/review/dreaming/")
    page.get_by_label("Username").fill("pm-dreamer")
    page.get_by_label("Password").fill("pm-dreamer-pw")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Dreaming runs")).to_be_visible()
    page.locator(f'tr[data-href="/review/dreaming/{run.pk}/"] a.open').click()

    expect(page.locator("#run-status")).to_have_text("planned")
    expect(page.locator("#window tbody tr")).to_have_count(2)
    expect(page.locator("#plan")).to_contain_text("Merge")
    expect(page.locator("#plan")).to_contain_text("supersedes")
    expect(page.locator("#plan table.diff")).to_have_count(2)  # one diff per proposal of the merge
    page.screenshot(path=artifacts / "dreaming-run-planned.png", full_page=True)

    page.locator(f'a.review-link[href="/review/proposals/{dormant.pk}/"]').click()
    page.get_by_label("Approve").check()
    page.get_by_label("Reason (required)").fill("Same preference said twice")
    page.get_by_role("button", name="Record decision").click()
    expect(page.locator("#proposal-status")).to_have_text(re.compile("Released|Applied"))
    assert apply_released(dormant).outcome == "applied"

    page.goto(f"{live_server.url}/review/dreaming/{run.pk}/")
    expect(page.locator("#run-status")).to_have_text("partially_applied")  # the link still waits
    expect(page.locator("#window")).to_contain_text("dormant")
    page.screenshot(path=artifacts / "dreaming-run-partial.png", full_page=True)
    survivor.refresh_from_db()
    assert survivor.state == "active"
