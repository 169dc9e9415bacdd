"""The Dreaming batch page: one reviewable unit per run, visible only to the tenant's reviewers."""

from django.test import Client

from maintenance.dreaming.runs import dreaming_pass
from proposals.models import DreamingRun
from tests.factories import make_person


def _login(person) -> Client:
    client = Client()
    client.force_login(person)
    return client


def test_the_run_page_lists_window_plan_and_each_actions_diff(agent, remember):
    remember("Alice prefers weekly summaries")
    remember("Alice prefers weekly summaries")
    dreaming_pass()
    run = DreamingRun.objects.get()
    reviewer = make_person("dream-page-rev", agent.tenant)
    page = _login(reviewer).get(f"/review/dreaming/{run.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "planned" in html and "Alice prefers weekly summaries" in html
    for proposal in run.proposals.all():
        assert f"/review/proposals/{proposal.pk}/" in html
    assert "supersedes" in html  # the link's frozen fields, rendered by the proposal diff
    listing = _login(reviewer).get("/review/dreaming/")
    assert listing.status_code == 200 and str(run.pk)[:6] in listing.content.decode()


def test_a_reviewer_of_another_tenant_gets_not_found(agent, other_agent, remember):
    remember("Alice prefers weekly summaries")
    remember("Alice prefers weekly summaries")
    dreaming_pass()
    run = DreamingRun.objects.get()
    outsider = make_person("dream-outsider", other_agent.tenant)
    client = _login(outsider)
    assert client.get(f"/review/dreaming/{run.pk}/").status_code == 404
    assert str(run.pk)[:6] not in client.get("/review/dreaming/").content.decode()
    assert _login(make_person("dream-nobody")).get(f"/review/dreaming/{run.pk}/").status_code == 404
    assert Client().get(f"/review/dreaming/{run.pk}/").status_code == 302  # to the login page
