"""The dashboard: labelled charts of waiting by age, decided per day and by rule, each with its table."""

import re
from datetime import timedelta

from django.utils import timezone

from proposals.models import Proposal
from tests.factories import approve, create_payload, factor_fact, make_evidence, submit


def _pending(agent, n, hours_old, prefix):
    made = [
        submit(
            agent.agent,
            create_payload(factor_fact(dedupe_key=f"{prefix}{i}"), [make_evidence(agent.agent)]),
        )
        for i in range(n)
    ]
    Proposal.objects.filter(pk__in=[p.pk for p in made]).update(
        created_at=timezone.now() - timedelta(hours=hours_old)
    )
    return made


def _table(html: str, table_id: str) -> list[list[str]]:
    body = html.split(f'id="{table_id}"', 1)[1].split("</tbody>", 1)[0].split("<tbody>", 1)[1]
    return [
        [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


def test_waiting_by_age_counts_only_what_needs_this_person(client, agent, pm, other_agent):
    _pending(agent, 2, 0.2, "fresh")
    _pending(agent, 1, 30, "day-old")
    _pending(agent, 3, 100, "old")
    decided = _pending(agent, 1, 100, "decided")
    approve(pm, decided[0])  # it no longer waits for pm
    submit(other_agent.agent, create_payload(factor_fact(), [make_evidence(other_agent.agent)]))
    client.force_login(pm)
    html = client.get("/review/dashboard/").content.decode()
    assert _table(html, "age-table") == [
        ["under 1 h", "2"],
        ["1–4 h", "0"],
        ["4–24 h", "0"],
        ["1–3 days", "1"],
        ["over 3 days", "3"],
    ]
    assert 'aria-labelledby="age-h age-desc"' in html and "proposals waiting (count)" in html


def test_decided_per_day_and_by_rule_count_only_this_persons_decisions(client, agent, pm, pm2):
    proposals = _pending(agent, 4, 2, "k")
    approve(pm, proposals[0])
    approve(pm, proposals[1])
    approve(pm2, proposals[2])  # someone else's decision is not on pm's dashboard
    client.force_login(pm)
    html = client.get("/review/dashboard/").content.decode()
    today = _table(html, "outcomes-table")[-1]
    assert today[1:] == ["2", "0", "0"]
    assert re.search(r'id="decided-7">2<', html)
    assert ">decisions</text>" in html and "day (UTC)" in html  # both axes say what they count
    assert '<text x="38" y="24" text-anchor="end" class="tick">2</text>' in html  # the top gridline
    rule = proposals[0].matched_rule
    assert [rule, "1", "2"] in _table(html, "rule-table")


def _ticks(html: str) -> list[int]:
    return [int(value) for value in re.findall(r'class="tick">(\d+)</text>', html)]


def test_gridlines_are_whole_counts_in_even_steps(client, agent, pm):
    for proposal in _pending(agent, 3, 2, "t"):
        approve(pm, proposal)
    client.force_login(pm)
    assert _ticks(client.get("/review/dashboard/").content.decode()) == [0, 1, 2, 3]
    for proposal in _pending(agent, 6, 2, "u"):
        approve(pm, proposal)
    assert _ticks(client.get("/review/dashboard/").content.decode()) == [0, 5, 10]


def test_another_tenants_work_never_reaches_the_dashboard(client, pm, other_agent, outsider):
    foreign = _pending(other_agent, 2, 10, "f")
    approve(outsider, foreign[0])
    client.force_login(pm)
    html = client.get("/review/dashboard/").content.decode()
    assert all(row[1] == "0" for row in _table(html, "age-table"))
    assert "Nothing waiting for you and nothing decided by you" in html
    assert all(row[1:] == ["0", "0", "0"] for row in _table(html, "outcomes-table"))


def test_the_dashboard_query_count_does_not_grow(client, agent, pm, pm2, django_assert_max_num_queries):
    client.force_login(pm)
    with django_assert_max_num_queries(12) as few:
        client.get("/review/dashboard/")
    for hours in (0.5, 5, 50, 500):
        for proposal in _pending(agent, 3, hours, f"h{hours}-"):
            approve(pm2, proposal)
    _pending(agent, 10, 3, "more")
    with django_assert_max_num_queries(len(few.captured_queries)):
        client.get("/review/dashboard/")
