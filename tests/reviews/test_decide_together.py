"""Deciding a proposal and the pending proposals it conflicts with, in one form, over HTTP."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from proposals.models import Proposal
from proposals.services import amend_proposal
from reviews.models import ReviewDecision
from tests.factories import (
    approve,
    as_payload,
    create_payload,
    factor_fact,
    make_evidence,
    submit,
)

KEY = "factor:momentum_12_1:ic_stability"


def _fact(agent, statement, **memory):
    return submit(
        agent.agent,
        create_payload(factor_fact(content={"statement": statement}, **memory), [make_evidence(agent.agent)]),
    )


@pytest.fixture
def rivals(agent):
    """Three pending proposals about the same slot (one dedupe key): this one and two rivals."""
    return [_fact(agent, f"momentum IC reading {n}") for n in range(3)]


def _page(client, proposal) -> str:
    return client.get(f"/review/proposals/{proposal.pk}/").content.decode()


def _rendered_form(html: str) -> dict:
    """What the browser would post: the values the page rendered into the together form."""
    form = html.split('id="together-form"', 1)[1].split("</form>", 1)[0]
    return {
        "decision": "approve",
        "action_digest": re.search(r'name="action_digest" value="([0-9a-f]{64})"', form).group(1),
        "others": re.findall(r'name="others" value="([^"]+)"', form),
        "others_decision": "reject",
        "reason": "the neutralised run supersedes the others",
        "represented_owner": "",
    }


def _post(client, proposal, data):
    return client.post(f"/review/proposals/{proposal.pk}/decide-together/", data, follow=True)


def _statuses(proposals) -> list[str]:
    return [Proposal.objects.get(pk=p.pk).status for p in proposals]


def test_approve_this_one_and_reject_the_rivals_in_one_form(client, pm, rivals):
    this, *others = rivals
    client.force_login(pm)
    data = _rendered_form(_page(client, this))
    assert sorted(data["others"]) == sorted(f"{p.pk}:{p.action_digest}" for p in others)
    response = _post(client, this, data)
    assert "Recorded 3 decisions" in response.content.decode()
    assert _statuses(rivals) == ["released", "rejected", "rejected"]
    for proposal in rivals:  # one decision each, on the digest the page showed for it
        decision = ReviewDecision.objects.get(proposal=proposal)
        assert decision.action_digest == proposal.action_digest
        assert (decision.actor, decision.reason, decision.channel) == (pm, data["reason"], "ui")
        assert decision.has_valid_seal()


def test_a_rival_changed_since_the_page_refuses_all_and_names_it(client, agent, pm, pm2, rivals):
    this, changed, other = rivals
    client.force_login(pm)
    data = _rendered_form(_page(client, this))
    # Meanwhile pm2 sends `changed` back and its agent amends it: a new digest.
    from reviews.services import record_decision

    record_decision(
        actor=pm2,
        proposal_id=changed.pk,
        decision="request_changes",
        reason="cite the run",
        represented_owner="",
        action_digest=changed.action_digest,
        channel="ui",
    )
    payload = create_payload(factor_fact(content={"statement": "amended"}), [make_evidence(agent.agent)])
    changed.refresh_from_db()
    amend_proposal(agent=agent.agent, proposal=changed, payload=as_payload(payload))
    html = _post(client, this, data).content.decode()
    assert "Nothing was recorded" in html and str(changed.pk) in html and "changed since" in html
    assert not ReviewDecision.objects.filter(actor=pm).exists()
    assert _statuses([this, other]) == ["pending_review", "pending_review"]


def test_another_tenants_proposal_is_never_listed_nor_decidable(client, pm, rivals, other_agent):
    foreign = submit(other_agent.agent, create_payload(factor_fact(), [make_evidence(other_agent.agent)]))
    assert foreign.dedupe_key == rivals[0].dedupe_key == KEY
    client.force_login(pm)
    html = _page(client, rivals[0])
    assert str(foreign.pk) not in html
    data = _rendered_form(html)
    data["others"].append(f"{foreign.pk}:{foreign.action_digest}")  # a lying request field
    html = _post(client, rivals[0], data).content.decode()
    assert "Nothing was recorded" in html
    assert not ReviewDecision.objects.exists()
    assert _statuses([foreign]) == ["pending_review"]


def test_a_proposal_that_does_not_conflict_cannot_ride_along(client, agent, pm, rivals):
    unrelated = _fact(agent, "value factor is fine", dedupe_key="factor:value:ok")
    client.force_login(pm)
    data = _rendered_form(_page(client, rivals[0]))
    data["others"].append(f"{unrelated.pk}:{unrelated.action_digest}")
    html = _post(client, rivals[0], data).content.decode()
    assert "Nothing was recorded" in html and "conflict with this one" in html
    assert not ReviewDecision.objects.exists()


def test_the_submitters_linked_user_gets_no_form_and_a_forced_post_records_nothing(
    client, linked_user, pm, rivals
):
    client.force_login(pm)
    data = _rendered_form(_page(client, rivals[0]))
    client.force_login(linked_user)
    assert 'id="together-form"' not in _page(client, rivals[0])
    html = _post(client, rivals[0], data).content.decode()
    assert "Nothing was recorded" in html and "cannot decide" in html
    assert not ReviewDecision.objects.exists()


def test_a_person_who_may_only_view_gets_no_form_and_a_forced_post_records_nothing(
    client, auditor, pm, rivals
):
    client.force_login(pm)
    data = _rendered_form(_page(client, rivals[0]))
    client.force_login(auditor)
    assert 'id="together-form"' not in _page(client, rivals[0])
    html = _post(client, rivals[0], data).content.decode()
    assert "Nothing was recorded" in html
    assert not ReviewDecision.objects.exists()


def test_a_pm_of_another_tenant_gets_404(client, outsider, rivals):
    client.force_login(outsider)
    data = {"decision": "approve", "action_digest": rivals[0].action_digest, "reason": "x"}
    assert client.post(f"/review/proposals/{rivals[0].pk}/decide-together/", data).status_code == 404
    assert not ReviewDecision.objects.exists()


def test_a_second_approval_by_the_same_pm_is_refused_and_the_rivals_stay(client, agent, pm):
    this, rival = (_fact(agent, f"restricted reading {n}", sensitivity="restricted") for n in range(2))
    client.force_login(pm)
    data = _rendered_form(_page(client, this))
    approve(pm, this)  # pm approved this one in another tab meanwhile: 1 of 2
    html = _page(client, this)
    assert 'id="together_decision"' not in html  # only the rivals are offered now
    html = _post(client, this, data).content.decode()
    assert "Nothing was recorded" in html and "already decided" in html
    assert _statuses([this, rival]) == ["pending_review", "pending_review"]
    assert ReviewDecision.objects.filter(actor=pm).count() == 1


@pytest.mark.parametrize(
    "others", [["not-a-pair"], ["nope:" + "0" * 64], ["a:b:c"]], ids=["no-colon", "bad-uuid", "two-colons"]
)
def test_malformed_selections_are_a_message_not_an_error(client, pm, rivals, others):
    client.force_login(pm)
    data = {**_rendered_form(_page(client, rivals[0])), "others": others}
    response = _post(client, rivals[0], data)
    assert response.status_code == 200 and "Nothing was recorded" in response.content.decode()
    assert not ReviewDecision.objects.exists()


def test_the_proposal_page_query_count_does_not_grow_with_conflicts(client, agent, pm):
    this = _fact(agent, "first reading")
    _fact(agent, "second reading")
    client.force_login(pm)
    with CaptureQueriesContext(connection) as few:
        _page(client, this)
    for n in range(6):
        _fact(agent, f"more readings {n}")
    with CaptureQueriesContext(connection) as many:
        html = _page(client, this)
    assert html.count('name="others"') == 7
    assert len(many) == len(few)


def test_another_pm_is_not_blocked_by_conflicts_decided_together(client, pm, pm2, rivals):
    """After pm decided all three, pm2's queue no longer lists any of them (none still needs a decision)."""
    client.force_login(pm)
    _post(client, rivals[0], _rendered_form(_page(client, rivals[0])))
    client.force_login(pm2)
    queue = client.get("/review/").content.decode()
    assert not any(str(p.pk) in queue for p in rivals)
