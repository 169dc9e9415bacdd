"""The review UI over the Django test client: permissions, filters, paging, htmx decisions."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from proposals.models import Proposal
from reviews.models import ReviewDecision
from reviews.selectors import proposal_owners
from tests.factories import create_payload, factor_fact, make_evidence, submit, user_preference


def _pending(agent, n, **memory):
    return [
        submit(
            agent.agent,
            create_payload(
                factor_fact(content={"statement": f"fact {i}"}, dedupe_key=f"k{i}", **memory),
                [make_evidence(agent.agent)],
            ),
        )
        for i in range(n)
    ]


def test_review_pages_need_a_login(client):
    response = client.get("/review/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_queue_shows_what_the_person_may_decide(client, pm, factor_proposal, other_agent):
    foreign = submit(other_agent.agent, create_payload(factor_fact(), [make_evidence(other_agent.agent)]))
    client.force_login(pm)
    html = client.get("/review/").content.decode()
    assert str(factor_proposal.pk) in html
    assert str(foreign.pk) not in html
    assert "1 waiting" in html


def test_queue_filters_by_type(client, agent, pm, factor_proposal):
    preference = submit(
        agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)], {"risk_level": "low"})
    )
    client.force_login(pm)
    html = client.get("/review/?type=preference").content.decode()
    assert str(preference.pk) in html and str(factor_proposal.pk) not in html


def test_keyset_pages_cover_the_queue_once(client, agent, pm):
    pending = {str(p.pk) for p in _pending(agent, 120)}
    client.force_login(pm)
    seen, url = [], "/review/?order=age"
    while url:
        response = client.get(url)
        page = response.context["page"]
        seen += [str(p.pk) for p in page.items]
        url = f"/review/?order=age&after={page.next_cursor}" if page.next_cursor else None
    assert len(seen) == len(set(seen)) == 120
    assert set(seen) == pending


def test_queue_page_query_count_does_not_grow(client, agent, pm):
    _pending(agent, 3)
    client.force_login(pm)
    with CaptureQueriesContext(connection) as few:
        client.get("/review/")
    _pending(agent, 30)
    with CaptureQueriesContext(connection) as many:
        client.get("/review/")
    assert len(many) == len(few)


def test_proposal_page_shows_diff_evidence_and_routing(client, pm, factor_proposal):
    client.force_login(pm)
    html = client.get(f"/review/proposals/{factor_proposal.pk}/").content.decode()
    for text in [
        "momentum_12_1",
        "CSI800",
        "rank_ic",
        "review-shared-facts",
        "shared_fact_requires_review",
        "valid",
        "observed in the latest backtest",
        "Record decision",
    ]:
        assert text in html


def test_auditor_sees_the_page_but_no_decision_form(client, auditor, factor_proposal):
    client.force_login(auditor)
    html = client.get(f"/review/proposals/{factor_proposal.pk}/").content.decode()
    assert "do not have permission to decide" in html
    assert "Record decision" not in html


def test_person_without_permission_gets_404(client, outsider, factor_proposal):
    client.force_login(outsider)
    assert client.get(f"/review/proposals/{factor_proposal.pk}/").status_code == 404


def test_htmx_decision_updates_the_panel(client, pm, factor_proposal):
    client.force_login(pm)
    response = client.post(
        f"/review/proposals/{factor_proposal.pk}/decide/",
        {
            "decision": "approve",
            "reason": "IC checked",
            "represented_owner": "",
            "action_digest": factor_proposal.action_digest,
        },
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "Released" in html and 'hx-swap-oob="true"' in html
    assert ReviewDecision.objects.get().channel == "ui"


def test_submitter_sees_why_and_a_forced_post_is_refused_with_a_message(client, linked_user, factor_proposal):
    client.force_login(linked_user)
    page = client.get(f"/review/proposals/{factor_proposal.pk}/").content.decode()
    response = client.post(
        f"/review/proposals/{factor_proposal.pk}/decide/",
        {"decision": "approve", "reason": "mine", "action_digest": factor_proposal.action_digest},
        HTTP_HX_REQUEST="true",
    )
    assert "You submitted this proposal" in page
    assert response.status_code == 200
    assert "cannot decide" in response.content.decode()
    assert not ReviewDecision.objects.exists()


def test_missing_reason_is_a_message_not_an_error(client, pm, factor_proposal):
    client.force_login(pm)
    response = client.post(
        f"/review/proposals/{factor_proposal.pk}/decide/",
        {"decision": "approve", "reason": "", "action_digest": factor_proposal.action_digest},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200 and "give a reason" in response.content.decode()


def test_bulk_approve_from_the_queue(client, agent, pm):
    low = [
        submit(
            agent.agent,
            create_payload(
                user_preference(content={"statement": f"p{n}"}),
                [make_evidence(agent.agent)],
                {"risk_level": "low"},
            ),
        )
        for n in range(3)
    ]
    client.force_login(pm)
    response = client.post(
        "/review/bulk-approve/",
        {
            "items": [f"{p.pk}:{p.action_digest}" for p in low],
            "reason": "routine",
            "represented_owner": "",
        },
        follow=True,
    )
    assert "Approved 3 of 3" in response.content.decode()
    assert set(Proposal.objects.filter(pk__in=[p.pk for p in low]).values_list("status", flat=True)) == {
        "released"
    }


@pytest.mark.parametrize("field", ["statement", "rationale"])
def test_injected_html_is_escaped(client, agent, pm, field):
    payload = create_payload(
        factor_fact(content={"statement": "<script>alert(1)</script>"}), [make_evidence(agent.agent)]
    )
    payload["rationale"] = "<img src=x onerror=alert(2)>"
    proposal = submit(agent.agent, payload)
    client.force_login(pm)
    for url in ["/review/", f"/review/proposals/{proposal.pk}/"]:
        html = client.get(url).content.decode()
        assert "<script>alert(1)" not in html and "<img src=x" not in html


def test_dashboard_counts_queue_and_decisions(client, pm, factor_proposal):
    client.force_login(pm)
    client.post(
        f"/review/proposals/{factor_proposal.pk}/decide/",
        {"decision": "reject", "reason": "leak", "action_digest": factor_proposal.action_digest},
    )
    response = client.get("/review/dashboard/")
    stats = response.context["stats"]
    assert (stats.queue_depth, stats.decided_last_7_days) == (0, 1)
    assert "<svg" in response.content.decode()


def test_queue_count_stops_at_its_cap(client, agent, pm, monkeypatch):
    """Counting a 100,000-proposal queue on every view would cost more than the page: it is capped."""
    from reviews import views

    monkeypatch.setattr(views, "QUEUE_COUNT_CAP", 2)
    _pending(agent, 3)
    client.force_login(pm)
    assert "2+ waiting" in client.get("/review/").content.decode()
    monkeypatch.setattr(views, "QUEUE_COUNT_CAP", 3)
    assert "3 waiting" in client.get("/review/").content.decode()


def test_a_two_approval_proposal_shows_progress_and_leaves_the_queue_of_who_approved(client, pm, pm2, agent):
    from tests.factories import approve

    proposal = submit(
        agent.agent, create_payload(factor_fact(sensitivity="restricted"), [make_evidence(agent.agent)])
    )
    assert proposal.required_approvals == 2
    client.force_login(pm)
    assert "0/2" in client.get("/review/").content.decode()
    approve(pm, proposal)
    html = client.get(f"/review/proposals/{proposal.pk}/").content.decode()
    assert "1 of 2 approvals on this version" in html
    assert 'id="already-decided"' in html and 'id="decision-form"' not in html
    assert str(proposal.pk) not in client.get("/review/").content.decode()  # it no longer needs pm
    client.force_login(pm2)
    queue = client.get("/review/").content.decode()
    assert str(proposal.pk) in queue and "1/2" in queue  # pm2 still sees it, one approval in
    assert 'id="decision-form"' in client.get(f"/review/proposals/{proposal.pk}/").content.decode()


def test_the_bulk_panel_shows_only_when_a_row_can_be_selected(client, pm, restricted_proposal, agent):
    client.force_login(pm)
    html = client.get("/review/").content.decode()
    assert str(restricted_proposal.pk) in html
    assert "Approve selected" not in html  # two approvals needed: never bulk-approvable
    submit(agent.agent, create_payload(factor_fact(dedupe_key="low"), [make_evidence(agent.agent)]))
    assert "Approve selected" in client.get("/review/").content.decode()


def test_pages_carry_their_icon_and_keep_htmx_inside_the_csp(client, pm):
    client.force_login(pm)
    html = client.get("/review/").content.decode()
    assert 'rel="icon"' in html
    assert "includeIndicatorStyles" in html  # htmx's inline <style> would break style-src 'self'
    assert "style=" not in html and "<style" not in html
    icon = client.get("/favicon.ico")
    assert icon.status_code == 301 and icon["Location"].endswith("reviews/favicon.svg")


def test_an_applied_update_shows_the_diff_as_decided_and_the_new_history(client, pm, agent, applied_memory):
    from executor.models import Receipt
    from tests.factories import apply_released, approve, owner_context

    update = submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(applied_memory.id),
            "base_revision": 1,
            "changes": {"sensitivity": "confidential"},
            "evidence": [make_evidence(agent.agent).binding()],
            "policy_context": owner_context(),
        },
    )
    approve(pm, update)
    assert apply_released(update).outcome == "applied"
    client.force_login(pm)
    html = client.get(f"/review/proposals/{update.pk}/").content.decode()
    row = html.split('<span title="sensitivity">Sensitivity</span></th>', 1)[1].split("</tr>", 1)[0]
    assert "internal" in row and "confidential" in row  # current = revision 1, as decided
    panel = client.get(f"/review/proposals/{update.pk}/receipt/").content.decode()
    receipt = Receipt.objects.get(proposal=update)
    assert f"Receipt #{receipt.seq}" in panel
    assert 'id="memory-history" hx-swap-oob="true"' in panel and "revision 2" in panel


def _options(html: str, name: str) -> list[tuple[str, str]]:
    select = html.split(f'name="{name}"', 1)[1].split("</select>", 1)[0]
    return re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', select)


def test_deciding_for_offers_the_owner_the_proposal_names_or_yourself(client, pm, factor_proposal):
    client.force_login(pm)
    html = client.get(f"/review/proposals/{factor_proposal.pk}/").content.decode()
    assert list(proposal_owners(factor_proposal)) == ["user:pm-alice", "org:quant-desk"]
    assert _options(html, "represented_owner") == [
        ("user:pm-alice", "user:pm-alice (the agent acts for)"),
        ("org:quant-desk", "org:quant-desk (the memory is about)"),
        ("pm-1", "yourself (pm-1)"),
    ]
    assert '<option value="user:pm-alice" selected>' in html  # the subject it acts for, by default


def test_a_forged_deciding_for_records_nothing(client, pm, factor_proposal):
    client.force_login(pm)
    response = client.post(
        f"/review/proposals/{factor_proposal.pk}/decide/",
        {
            "decision": "approve",
            "reason": "IC checked",
            "represented_owner": "org:someone-else",
            "action_digest": factor_proposal.action_digest,
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert "choose whom you decide for" in response.content.decode()
    assert not ReviewDecision.objects.exists()
    factor_proposal.refresh_from_db()
    assert factor_proposal.status == Proposal.Status.PENDING_REVIEW


def test_a_forged_deciding_for_in_bulk_records_nothing(client, agent, pm):
    low = submit(
        agent.agent,
        create_payload(user_preference(), [make_evidence(agent.agent)], {"risk_level": "low"}),
    )
    client.force_login(pm)
    response = client.post(
        "/review/bulk-approve/",
        {"items": [f"{low.pk}:{low.action_digest}"], "reason": "routine", "represented_owner": "org:x"},
        follow=True,
    )
    assert "Select proposals and give one reason" in response.content.decode()
    assert not ReviewDecision.objects.exists()


def test_a_create_reads_as_a_new_memory_with_no_current_column(client, pm, factor_proposal):
    client.force_login(pm)
    html = client.get(f"/review/proposals/{factor_proposal.pk}/").content.decode()
    table = html.split('id="diff"', 1)[1].split("</table>", 1)[0]
    assert "A new memory: nothing exists yet" in table
    assert ">Current<" not in table and ">New value<" in table


def test_times_read_as_a_person_says_them(client, pm, factor_proposal):
    client.force_login(pm)
    html = client.get("/review/").content.decode()
    assert re.search(r'<time datetime="[^"]+" title="\d{4}-\d\d-\d\d \d\d:\d\d UTC">just now</time>', html)
    assert " ago</time>" not in html.replace("just now", "")  # no "0 minutes ago"


def test_the_empty_queue_draws_its_glyph_inline(client, pm):
    """An inline SVG, not an emoji a machine without an emoji font draws as an empty box."""
    client.force_login(pm)
    html = client.get("/review/").content.decode()
    empty = html.split('class="empty">')[1].split("</td>")[0]
    assert '<svg class="empty-glyph"' in empty and 'aria-hidden="true"' in empty
    assert "Nothing waiting for you." in empty
    assert all(ord(character) < 0x2000 for character in empty)
