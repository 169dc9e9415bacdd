"""A PM's review, in real headless Chromium, against a live server and a real executor worker."""

import re

import pytest
from django.contrib.auth.models import User
from guardian.shortcuts import assign_perm
from playwright.sync_api import expect

from executor.models import Receipt
from reviews.selectors import DECIDE
from tests.factories import create_payload, factor_fact, make_evidence, submit, user_preference
from tests.workers import celery_worker

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]


def _person(username, tenant=None):
    user = User.objects.create_user(username, password=f"{username}-pw")
    if tenant is not None:
        assign_perm(DECIDE, user, tenant)
    return user


def _login(page, base_url, username):
    page.goto(f"{base_url}/review/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(f"{username}-pw")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name=re.compile("Review queue"))).to_be_visible()


@pytest.fixture
def scene(agent):
    """A factor conclusion and a preference waiting for review, and the people involved."""
    fact = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    submit(
        agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)], {"risk_level": "low"})
    )
    owner = _person("agent-owner", agent.tenant)
    agent.agent.user = owner
    agent.agent.save(update_fields=["user"])
    return {"fact": fact, "pm": _person("pm-alice", agent.tenant), "stranger": _person("stranger")}


def test_pm_filters_opens_approves_and_sees_the_receipt(
    live_server, watched_page, scene, tmp_path, artifacts
):
    fact = scene["fact"]
    with celery_worker(tmp_path):
        page = watched_page()
        _login(page, live_server.url, "pm-alice")
        expect(page.locator("#matching")).to_have_text("2 waiting")
        page.get_by_label("Type").select_option("semantic_fact")
        page.get_by_role("button", name="Apply filters").click()
        expect(page.locator("#matching")).to_have_text("1 waiting")
        page.screenshot(path=artifacts / "review-queue.png", full_page=True)

        page.get_by_role("link", name=re.compile("momentum_12_1 shows unstable IC")).click()
        diff = page.locator("#diff")
        for text in ["Factor", "momentum_12_1", "CSI800", "20d", "rank_ic", "0.012"]:
            expect(diff).to_contain_text(text)
        expect(page.locator("#evidence")).to_contain_text("valid")
        expect(page.locator("#evidence")).to_contain_text("ic_ir")
        page.screenshot(path=artifacts / "review-proposal.png", full_page=True)

        page.get_by_label("Approve").check()
        page.get_by_label("Reason (required)").fill("IC table checked against the neutralised run")
        page.get_by_role("button", name="Record decision").click()
        expect(page.locator("#decisions")).to_contain_text("IC table checked")
        expect(page.locator("#receipt")).to_contain_text("· applied", timeout=30_000)
        expect(page.locator("#proposal-status")).to_have_text("Applied")
        page.screenshot(path=artifacts / "review-applied.png", full_page=True)

    receipt = Receipt.objects.get(proposal=fact, outcome="applied")
    assert len(receipt.decision_ids) == 1


def test_person_without_permission_sees_nothing(live_server, browser, scene):
    page = browser.new_page()
    _login(page, live_server.url, "stranger")
    expect(page.locator("#matching")).to_have_text("0 waiting")
    response = page.goto(f"{live_server.url}/review/proposals/{scene['fact'].pk}/")
    assert response.status == 404


def test_submitters_linked_user_cannot_approve(live_server, watched_page, scene):
    page = watched_page()
    _login(page, live_server.url, "agent-owner")
    expect(page.locator("#matching")).to_have_text("0 waiting")
    page.goto(f"{live_server.url}/review/proposals/{scene['fact'].pk}/")
    expect(page.locator("#decision-blocked")).to_contain_text("You submitted this proposal")
    expect(page.get_by_role("button", name="Record decision")).to_have_count(0)
