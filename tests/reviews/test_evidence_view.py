"""Evidence on the proposal page: cited figures highlighted, external references linked only when safe."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evidence.services import register_evidence
from reviews.figures import cited_figures, evidence_rows, external_link
from tests.factories import create_payload, factor_fact, submit

BACKTEST = {
    "ic_mean": 0.021,
    "ic_ir": 0.3512,
    "turnover": 0.4,
    "years": 3,
    "by_year": {"2019": {"ic": 0.034}, "2020": {"ic": -0.008}},
}
STATEMENT = "momentum_12_1 IC falls to 0.021 (IR 0.35) after neutralisation; 2020 IC was -0.8%"


def _proposal(agent, ref="run-42", content=None):
    evidence = register_evidence(
        agent=agent.agent, kind="backtest_run", external_ref=ref, content=content or BACKTEST
    )
    memory = factor_fact(
        content={"statement": STATEMENT, "value": 0.021, "horizon": "20d"}, dedupe_key=f"factor:{ref}"
    )
    return submit(agent.agent, create_payload(memory, [evidence]))


def _page(client, proposal) -> str:
    return client.get(f"/review/proposals/{proposal.pk}/").content.decode()


def test_figures_are_numbers_standing_alone_not_digits_inside_names():
    figures = [f.text for f in cited_figures({"statement": STATEMENT, "value": 0.021, "horizon": "20d"})]
    assert figures == ["0.021", "0.35", "2020", "-0.8%"]  # not 12 nor 1 of momentum_12_1, not 20d


def test_the_cited_figures_are_marked_in_the_evidence(client, pm, agent):
    client.force_login(pm)
    html = _page(client, _proposal(agent))
    marked = re.findall(r'<th scope="row"><code>([^<]+)</code></th>\s*<td><mark', html)
    # 0.021 as written, 0.35 rounded from 0.3512, -0.8% of -0.008; turnover and years are not cited.
    assert sorted(marked) == ["by_year.2020.ic", "ic_ir", "ic_mean"]  # PostgreSQL's jsonb reorders keys
    figures = html.split('id="cited-figures"', 1)[1].split("</p>", 1)[0]
    assert '0.021 <span class="sr-only">(</span>found below' in figures
    assert '2020 <span class="sr-only">(</span>not in the evidence' in figures


def test_an_integer_figure_must_be_equal_not_rounded():
    figures = cited_figures({"statement": "over 3 years"})
    rows = evidence_rows({"years": 3, "ratio": 3.2}, figures)
    assert [(row.path, row.cited) for row in rows] == [("years", True), ("ratio", False)]


def test_an_https_reference_is_a_link_that_cannot_reach_back(client, pm, agent):
    client.force_login(pm)
    html = _page(client, _proposal(agent, ref="https://research.example.com/runs/42?view=ic"))
    assert (
        '<a href="https://research.example.com/runs/42?view=ic" rel="noopener noreferrer" target="_blank"'
        in html
    )


@pytest.mark.parametrize(
    "ref",
    [
        "javascript:alert(document.cookie)",
        "JavaScript:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "https:alert(1)",
        "//evil.example/x",
        "run-42",
        'https://x.example/"onmouseover="alert(1)',
    ],
)
def test_anything_but_a_plain_http_url_stays_text(client, pm, agent, ref):
    client.force_login(pm)
    html = _page(client, _proposal(agent, ref=ref))
    evidence = html.split('id="evidence"', 1)[1]
    if external_link(ref) is None:
        assert 'class="external"' not in evidence
        assert 'href="javascript' not in evidence.lower() and "<script>alert" not in evidence
    else:  # a quote inside a real URL is escaped, never an attribute of its own
        assert 'onmouseover="alert' not in evidence


def test_the_evidence_table_is_capped_and_the_page_query_count_does_not_grow(client, pm, agent):
    client.force_login(pm)
    small = _proposal(agent, ref="run-small")
    with CaptureQueriesContext(connection) as few:
        _page(client, small)
    big = _proposal(agent, ref="run-big", content={f"k{n}": n / 1000 for n in range(500)})
    with CaptureQueriesContext(connection) as many:
        html = _page(client, big)
    assert html.count('<th scope="row"><code>k') == 200
    assert len(many) == len(few)
