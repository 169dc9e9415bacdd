"""A PM's journeys in headless Chromium: two approvers, deciding conflicts together, the keyboard.

Each test fails on any browser console error (``watched_page``); screenshots go to test-artifacts/.
"""

import re

import pytest
from django.contrib.auth.models import User
from guardian.shortcuts import assign_perm
from playwright.sync_api import expect

from executor.models import Receipt
from proposals.models import Proposal
from reviews.models import ReviewDecision
from reviews.selectors import DECIDE
from tests.factories import create_payload, factor_fact, make_evidence, submit
from tests.workers import celery_worker

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _person(username, tenant):
    user = User.objects.create_user(username, password=f"{username}-pw")
    assign_perm(DECIDE, user, tenant)
    return user


def _login(page, base_url, username):
    page.goto(f"{base_url}/review/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(f"{username}-pw")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name=re.compile("Review queue"))).to_be_visible()


def _fact(agent, statement, **memory):
    evidence = make_evidence(agent.agent, {"ic_mean": 0.021, "ic_ir": 0.35})
    return submit(
        agent.agent, create_payload(factor_fact(content={"statement": statement}, **memory), [evidence])
    )


def _row(page, proposal):
    return page.locator(f'tr[data-href="/review/proposals/{proposal.pk}/"]')


@pytest.mark.services
def test_two_pms_approve_in_turn_and_the_second_sees_the_receipt(
    live_server, watched_page, agent, tmp_path, artifacts
):
    fact = _fact(agent, "momentum_12_1 IC is 0.021 after neutralisation", sensitivity="restricted")
    assert fact.required_approvals == 2
    _person("pm-alice", agent.tenant)
    _person("pm-bob", agent.tenant)
    with celery_worker(tmp_path):
        alice, bob = watched_page(), watched_page()
        _login(alice, live_server.url, "pm-alice")
        _login(bob, live_server.url, "pm-bob")
        expect(_row(alice, fact).locator("td.approvals")).to_have_text("0/2")

        _row(alice, fact).locator("a.open").click()
        alice.get_by_label("Approve").check()
        alice.get_by_label("Reason (required)").fill("IC matches the neutralised run")
        alice.get_by_role("button", name="Record decision").click()
        expect(alice.locator("#approval-progress")).to_have_text("1 of 2 approvals on this version")
        expect(alice.locator("#already-decided")).to_be_visible()
        expect(alice.locator("#proposal-status")).to_have_text("Pending Review")
        alice.screenshot(path=artifacts / "pm-two-approvers-first.png", full_page=True)
        alice.get_by_role("link", name="Review queue").click()
        expect(alice.locator("#matching")).to_have_text("0 waiting")  # it no longer needs alice
        expect(_row(alice, fact)).to_have_count(0)

        bob.reload()
        expect(_row(bob, fact).locator("td.approvals")).to_have_text("1/2")  # still needs bob
        bob.screenshot(path=artifacts / "pm-two-approvers-queue-of-second.png", full_page=True)
        _row(bob, fact).locator("a.open").click()
        expect(bob.locator("#approval-progress")).to_have_text("1 of 2 approvals on this version")
        bob.get_by_label("Approve").check()
        bob.get_by_label("Reason (required)").fill("Second pair of eyes: agreed")
        bob.get_by_role("button", name="Record decision").click()
        expect(bob.locator("#receipt")).to_contain_text("· applied", timeout=30_000)
        expect(bob.locator("#proposal-status")).to_have_text("Applied")
        bob.screenshot(path=artifacts / "pm-two-approvers-applied.png", full_page=True)

    receipt = Receipt.objects.get(proposal=fact, outcome="applied")
    assert len(receipt.decision_ids) == 2


def test_the_conflict_warning_and_deciding_together(live_server, watched_page, agent, artifacts):
    this = _fact(agent, "momentum_12_1 IC is 0.021 after neutralisation")
    rival = _fact(agent, "momentum_12_1 IC is 0.034 after neutralisation")
    _person("pm-alice", agent.tenant)
    page = watched_page()
    _login(page, live_server.url, "pm-alice")
    page.goto(f"{live_server.url}/review/proposals/{this.pk}/")

    conflicts = page.locator("#conflicts")
    expect(conflicts).to_contain_text("This conflicts with pending proposal")
    expect(conflicts).to_contain_text("0.034")  # the rival's value, side by side
    expect(page.locator("#cited-figures")).to_contain_text("0.021 (found below)")
    expect(page.locator("#evidence mark")).to_have_text("0.021")
    form = page.locator("#together-form")
    expect(form.locator('input[name="others"]')).to_be_checked()
    expect(form.get_by_label("This proposal")).to_have_value("approve")
    expect(form.get_by_label("Decide the ticked ones")).to_have_value("reject")
    page.screenshot(path=artifacts / "pm-conflict-warning.png", full_page=True)

    form.get_by_label("Reason (one for all, required)").fill("0.021 is the neutralised run; 0.034 is not")
    form.get_by_role("button", name="Record these decisions").click()
    expect(page.locator(".messages")).to_contain_text("Recorded 2 decisions, one per proposal.")
    expect(page.locator("#proposal-status")).to_have_text("Released")
    page.screenshot(path=artifacts / "pm-decided-together.png", full_page=True)
    page.goto(f"{live_server.url}/review/proposals/{rival.pk}/")
    expect(page.locator("#proposal-status")).to_have_text("Rejected")
    expect(page.locator("#decisions")).to_contain_text("0.034 is not")

    page.get_by_role("link", name="Dashboard").click()
    expect(page.locator("#decided-7")).to_have_text("2")
    expect(page.get_by_role("img", name=re.compile("Your decisions per day"))).to_be_visible()
    page.locator("#outcomes-chart + .legend + details summary").click()
    expect(page.locator("#outcomes-table tbody tr").last).to_contain_text("1")
    page.screenshot(path=artifacts / "pm-dashboard.png", full_page=True)


def test_keyboard_review_moves_opens_and_decides(live_server, watched_page, agent, artifacts):
    facts = [_fact(agent, f"reading number {n} of the IC", dedupe_key=f"k{n}") for n in range(3)]
    _person("pm-alice", agent.tenant)
    page = watched_page()
    _login(page, live_server.url, "pm-alice")
    rows = [_row(page, fact) for fact in facts]
    selected = re.compile(r"\bkb-selected\b")

    page.keyboard.press("j")
    expect(rows[0]).to_have_class(selected)
    expect(rows[0].locator("a.open")).to_be_focused()
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("k")
    expect(rows[1]).to_have_class(selected)
    expect(rows[0]).not_to_have_class(selected)
    page.screenshot(path=artifacts / "pm-keyboard-queue.png", full_page=True)

    page.keyboard.press("?")
    expect(page.locator("#shortcut-help")).to_be_visible()
    page.screenshot(path=artifacts / "pm-keyboard-help.png")
    page.keyboard.press("Escape")
    expect(page.locator("#shortcut-help")).to_be_hidden()

    agent_filter = page.get_by_role("textbox", name="Agent")
    agent_filter.focus()
    page.keyboard.type("jk")  # typing in a field is typing, not moving
    expect(agent_filter).to_have_value("jk")
    expect(rows[1]).to_have_class(selected)
    agent_filter.fill("")
    page.locator("h1").click()  # leave the field
    page.keyboard.press("k")
    expect(rows[0]).to_have_class(selected)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(f"/review/proposals/{facts[0].pk}/$"))

    page.keyboard.press("r")
    expect(page.get_by_label("Reject")).to_be_checked()
    expect(page.get_by_label("Reason (required)")).to_be_focused()
    page.locator("h1").click()  # out of the reason box, where "a" would be text
    page.keyboard.press("a")
    expect(page.get_by_label("Approve")).to_be_checked()
    reason = page.get_by_label("Reason (required)")
    expect(reason).to_be_focused()
    page.keyboard.type("rc: read the IC table")  # r and c in the reason box stay text
    expect(page.get_by_label("Approve")).to_be_checked()
    page.screenshot(path=artifacts / "pm-keyboard-decide.png", full_page=True)
    page.keyboard.press("Tab")  # Deciding for
    page.keyboard.press("Tab")  # Record decision
    page.keyboard.press("Enter")
    expect(page.locator("#proposal-status")).to_have_text("Released")
    expect(page.locator("#decisions")).to_contain_text("rc: read the IC table")
    page.keyboard.press("?")  # still listening after htmx swapped the panel in
    expect(page.locator("#shortcut-help")).to_be_visible()
    page.keyboard.press("Escape")

    decision = ReviewDecision.objects.get(proposal=facts[0])
    assert (decision.decision, decision.reason) == ("approve", "rc: read the IC table")
    assert Proposal.objects.get(pk=facts[1].pk).status == "pending_review"
