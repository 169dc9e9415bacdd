"""Allowlisted links: proposed like any change, one tenant and scope, bound to both ends, executor-written."""

import itertools

import pytest
from django.core.management import call_command

from executor.models import Receipt
from memory_core.models import MemoryLink
from proposals.models import Proposal
from tests.factories import apply_released, approve, make_evidence, make_person, owner_context, submit
from tests.registrations.publishing import publish_changed_default

_keys = itertools.count()


@pytest.fixture
def reviewers(agent):
    return [make_person("link-rev-a", agent.tenant), make_person("link-rev-b", agent.tenant)]


@pytest.fixture
def links_allowed(agent):
    """Publish a registration that lets preferences link out by supports and same_as."""
    publish_changed_default(
        agent,
        lambda document: document["types"]["preference"].update(links={"relations": ["supports", "same_as"]}),
    )


def _link(source, target, relation="supports", **extra) -> dict:
    return {
        "action": "link",
        "memory_id": str(source.pk),
        "base_revision": source.revision,
        "link": {"to_memory_id": str(target.pk), "to_revision": target.revision, "relation": relation},
        "policy_context": owner_context(),
        **extra,
    }


def _post(client, body):
    return client.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY=f"link-{next(_keys)}")


def _run(proposal_id, reviewers) -> Receipt:
    proposal = Proposal.objects.get(pk=proposal_id)
    for person in reviewers[: proposal.required_approvals]:
        approve(person, proposal)
    return apply_released(proposal)


def test_a_relation_the_registration_does_not_list_is_refused(agent, api, remember):
    a, b = remember("Alice prefers weekly summaries"), remember("Alice prefers Monday mornings")
    response = _post(api, _link(a, b))  # the default registration allows no links
    assert response.status_code == 422
    assert response.json()["code"] == "link_relation_not_allowed"
    assert not Proposal.objects.filter(action="link").exists()


def test_a_link_across_scopes_is_refused(agent, api, remember, links_allowed):
    a = remember("Alice prefers weekly summaries")
    b = remember("Alice prefers terse answers in this session", scope="session")
    response = _post(api, _link(a, b))
    assert response.status_code == 422
    assert response.json()["code"] == "link_cross_scope"


def test_another_tenants_memory_is_no_end_at_all(agent, other_agent, api, remember, links_allowed):
    a = remember("Alice prefers weekly summaries")
    foreign = remember("Their preference", handle=other_agent)
    response = _post(api, _link(a, foreign))
    assert response.status_code == 422
    assert response.json()["code"] == "link_end_not_found"
    assert "Their preference" not in response.content.decode()


def test_an_unknown_relation_and_a_lying_field_are_refused(agent, api, remember, links_allowed):
    a, b = remember("Alice prefers weekly summaries"), remember("Alice prefers Monday mornings")
    assert _post(api, _link(a, b, relation="owns")).json()["code"] == "link_relation_not_allowed"
    with_memory = _link(a, b) | {"memory": {"scope": "user"}}
    assert _post(api, with_memory).status_code == 400
    create_with_link = {"action": "create", "link": _link(a, b)["link"], "memory": {}}
    assert _post(api, create_with_link).status_code == 400
    assert not Proposal.objects.filter(action="link").exists()


def test_an_allowed_link_is_written_by_the_executor_bound_to_both_ends(
    agent, api, remember, links_allowed, reviewers
):
    a, b = remember("Alice prefers weekly summaries"), remember("Alice prefers Monday mornings")
    response = _post(api, _link(a, b))
    assert response.status_code == 201, response.json()
    assert not MemoryLink.objects.exists()  # submitting writes nothing
    receipt = _run(response.json()["id"], reviewers)
    assert receipt.outcome == "applied"
    link = MemoryLink.objects.get()
    assert (link.source_id, link.target_id, link.relation, link.scope) == (a.pk, b.pk, "supports", "user")
    assert len(link.evidence["from"]) == 1 and len(link.evidence["to"]) == 1
    assert receipt.effects["linked"]["link_id"] == str(link.pk)
    call_command("verify_receipts")  # the link's receipt chains and verifies like any other


def test_an_end_that_moved_after_the_proposal_writes_no_link(agent, api, remember, links_allowed, reviewers):
    a, b = remember("Alice prefers weekly summaries"), remember("Alice prefers Monday mornings")
    link_id = _post(api, _link(a, b)).json()["id"]
    update = {
        "action": "update",
        "memory_id": str(b.pk),
        "base_revision": b.revision,
        "changes": {"content": {"statement": "Alice prefers Tuesday mornings"}},
        "evidence": [make_evidence(agent.agent).binding()],
        "policy_context": owner_context(),
    }
    assert _run(submit(agent.agent, update).pk, reviewers).outcome == "applied"
    receipt = _run(link_id, reviewers)
    assert receipt.outcome == "stale"
    assert not MemoryLink.objects.exists()


def _linked_pair(
    api, remember, reviewers, first="Alice prefers weekly summaries", second="Alice likes Mondays"
):
    a, b = remember(first), remember(second)
    assert _run(_post(api, _link(a, b)).json()["id"], reviewers).outcome == "applied"
    return a, b


def _search(api, query, links=2):
    body = {"query": query, "context": {"links": links}, "policy_context": owner_context()}
    response = api.post("/api/v1/recall/search", body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def test_recall_follows_a_link_one_hop_and_audits_it(agent, api, remember, links_allowed, reviewers):
    a, b = _linked_pair(api, remember, reviewers)
    [hit] = [item for item in _search(api, "weekly")["results"] if item["memory"]["memory_id"] == str(a.pk)]
    [linked] = hit["links"]
    assert (linked["relation"], linked["direction"]) == ("supports", "out")
    assert linked["memory"]["memory_id"] == str(b.pk)
    assert linked["return_mode"] == "raw"
    without = _search(api, "weekly", links=0)["results"]
    assert all("links" not in item for item in without)


def test_a_linked_memory_is_fenced_exactly_as_if_it_were_searched(
    agent, api, remember, links_allowed, reviewers
):
    from provenance.services import invalidate_evidence_revision

    a, b = _linked_pair(api, remember, reviewers)
    invalidate_evidence_revision(revision=b.evidence_links.get().evidence_revision, reason="wrong chat")
    direct = [i for i in _search(api, "Mondays")["results"] if i["memory"]["memory_id"] == str(b.pk)]
    [hit] = [i for i in _search(api, "weekly")["results"] if i["memory"]["memory_id"] == str(a.pk)]
    assert [link["return_mode"] for link in hit["links"]] == [item["return_mode"] for item in direct]
    assert hit["links"][0]["return_mode"] == "metadata_only"
    assert "Mondays" not in str(hit["links"])


def test_a_linked_memory_outside_the_search_filters_is_not_shown(
    agent, api, remember, links_allowed, reviewers
):
    a, b = _linked_pair(api, remember, reviewers)
    body = {
        "query": "weekly",
        "filters": {"types": ["preference"], "states": ["active"]},
        "context": {"links": 1},
        "policy_context": owner_context(),
    }
    expire = {"action": "expire", "memory_id": str(b.pk), "base_revision": b.revision, "reason": "old"}
    assert (
        _run(submit(agent.agent, expire | {"policy_context": owner_context()}).pk, reviewers).outcome
        == "applied"
    )
    results = api.post("/api/v1/recall/search", body, format="json").json()["results"]
    [hit] = [i for i in results if i["memory"]["memory_id"] == str(a.pk)]
    assert hit["links"] == []


@pytest.mark.parametrize("links", [-1, 6, "many"])
def test_link_bound_is_validated(api, links):
    response = api.post("/api/v1/recall/search", {"query": "x", "context": {"links": links}}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_following_links_costs_the_same_queries_for_more_links(
    agent, api, remember, links_allowed, reviewers, django_assert_max_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    _linked_pair(api, remember, reviewers, "weekly note one", "first target")

    def count() -> int:
        with CaptureQueriesContext(connection) as captured:
            _search(api, "weekly", links=5)
        return len(captured)

    count()
    few = count()
    for n in range(3):
        _linked_pair(api, remember, reviewers, f"weekly note {n} more", f"target {n}")
    assert count() == few  # the links and their ends come in one query each, whatever their number


def test_a_link_proposal_renders_for_its_reviewer(agent, api, remember, links_allowed, reviewers, client):
    a, b = remember("Alice prefers weekly summaries"), remember("Alice prefers Monday mornings")
    proposal_id = _post(api, _link(a, b, relation="same_as")).json()["id"]
    client.force_login(reviewers[0])
    html = client.get(f"/review/proposals/{proposal_id}/").content.decode()
    assert "same_as" in html and str(b.pk) in html
    assert f"Link memory {a.pk} (revision 1) same_as memory {b.pk} (revision 1)." in html


def test_a_link_receipt_reads_in_the_admin(agent, api, remember, links_allowed, reviewers):
    from django.contrib.auth.models import User
    from django.test import Client

    a, b = remember("Alice prefers weekly summaries"), remember("Alice prefers Monday mornings")
    receipt = _run(_post(api, _link(a, b)).json()["id"], reviewers)
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="pw"))
    assert client.get("/admin/executor/receipt/").status_code == 200
    assert client.get(f"/admin/executor/receipt/{receipt.pk}/change/").status_code == 200
