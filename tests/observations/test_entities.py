"""Canonical entities: made and merged only through reviewed proposals; a merge is a reversible redirect."""

import itertools

import pytest
from django.core.management import call_command

from memory_core.models import Entity
from proposals.models import Proposal
from tests.factories import apply_released, approve, make_person

_keys = itertools.count()


@pytest.fixture
def reviewers(agent):
    return [make_person("ent-rev-a", agent.tenant), make_person("ent-rev-b", agent.tenant)]


def _post(client, action, **entity):
    body = {"action": action, "entity": {k: str(v) if k.endswith("_id") else v for k, v in entity.items()}}
    return client.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY=f"ent-{next(_keys)}")


def _run(proposal_id, reviewers):
    proposal = Proposal.objects.get(pk=proposal_id)
    for person in reviewers[: proposal.required_approvals]:
        approve(person, proposal)
    return apply_released(proposal)


def _entity(api, reviewers, kind, name, aliases=()) -> Entity:
    response = _post(api, "entity_create", kind=kind, name=name, aliases=list(aliases))
    assert response.status_code == 201, response.json()
    assert response.json()["classification"] == "review_required"
    assert not Entity.objects.filter(name=name).exists()  # a proposal writes nothing
    assert _run(response.json()["id"], reviewers).outcome == "applied"
    return Entity.objects.get(pk=response.json()["memory_id"])


def test_an_exact_match_after_normalisation_is_resolved_not_proposed(agent, api, reviewers):
    gs = _entity(api, reviewers, "organisation", "Goldman Sachs Group Inc.")
    response = _post(api, "entity_create", kind="organisation", name="goldman sachs group")
    assert response.status_code == 409
    assert response.json()["code"] == "entity_exists"
    assert response.json()["entity_id"] == str(gs.pk)


def test_near_matches_are_recorded_on_the_proposal_for_review(agent, api, reviewers):
    gs = _entity(api, reviewers, "organisation", "Goldman Sachs Group")
    body = _post(api, "entity_create", kind="organisation", name="GSG").json()
    assert body["fields"]["near"] == [{"entity_id": str(gs.pk), "tier": "initialism"}]
    assert body["status"] == "pending_review"


def test_merging_people_is_review_and_a_redirect_that_unmerges(agent, api, reviewers):
    alice = _entity(api, reviewers, "person", "Alice Zhang")
    dupe = _entity(api, reviewers, "person", "Alice Zhong")
    merge = _post(api, "entity_merge", entity_id=dupe.pk, into_entity_id=alice.pk).json()
    assert merge["classification"] == "review_required"
    assert merge["fields"]["needs_review"] is True and merge["fields"]["tier"] == "typo"
    assert _run(merge["id"], reviewers).outcome == "applied"
    dupe.refresh_from_db()
    assert dupe.redirect_to_id == alice.pk
    assert Entity.objects.count() == 2  # never a delete

    unmerge = _post(api, "entity_unmerge", entity_id=dupe.pk).json()
    assert _run(unmerge["id"], reviewers).outcome == "applied"
    dupe.refresh_from_db()
    assert dupe.redirect_to_id is None
    call_command("verify_receipts")


def test_other_tenants_entities_and_kinds_are_refused(agent, other_agent, api, reviewers):
    mine = _entity(api, reviewers, "organisation", "Acme Capital")
    theirs_reviewers = [
        make_person("o-rev-a", other_agent.tenant),
        make_person("o-rev-b", other_agent.tenant),
    ]
    theirs = _entity(other_agent.client, theirs_reviewers, "organisation", "Beta Capital")
    response = _post(api, "entity_merge", entity_id=mine.pk, into_entity_id=theirs.pk)
    assert response.status_code == 422 and response.json()["code"] == "entity_invalid"
    factor = _entity(api, reviewers, "factor", "momentum_12_1")
    response = _post(api, "entity_merge", entity_id=mine.pk, into_entity_id=factor.pk)
    assert response.status_code == 422
    assert _post(api, "entity_unmerge", entity_id=mine.pk).status_code == 422


def test_lying_fields_on_entity_actions_are_refused(agent, api):
    assert _post(api, "entity_create", name="No kind").status_code == 400
    bad = {"action": "entity_create", "entity": {"kind": "person", "name": "X"}, "memory_id": "0" * 32}
    assert api.post("/api/v1/proposals/", bad, format="json", HTTP_IDEMPOTENCY_KEY="x").status_code == 400


def test_a_merge_on_a_moved_entity_is_stale_and_writes_nothing(agent, api, reviewers):
    a = _entity(api, reviewers, "project", "Project Atlas")
    b = _entity(api, reviewers, "project", "Atlas")
    c = _entity(api, reviewers, "project", "Atlas Programme")
    first = _post(api, "entity_merge", entity_id=b.pk, into_entity_id=a.pk).json()
    second = _post(api, "entity_merge", entity_id=b.pk, into_entity_id=c.pk).json()
    assert _run(first["id"], reviewers).outcome == "applied"
    assert _run(second["id"], reviewers).outcome == "stale"
    b.refresh_from_db()
    assert b.redirect_to_id == a.pk


def test_recall_can_expand_a_query_entity_to_its_canonical_aliases(agent, api, reviewers, remember):
    from tests.factories import owner_context

    gs = _entity(api, reviewers, "organisation", "Goldman Sachs", aliases=["GS"])
    dupe = _entity(api, reviewers, "organisation", "Goldman")
    assert _run(_post(api, "entity_merge", entity_id=dupe.pk, into_entity_id=gs.pk).json()["id"], reviewers)
    memory = remember("Alice follows Goldman Sachs research")

    def ids(expand):
        body = {"query": "GS", "expand_entities": expand, "policy_context": owner_context()}
        return [
            i["memory"]["memory_id"]
            for i in api.post("/api/v1/recall/search", body, format="json").json()["results"]
        ]

    assert str(memory.pk) not in ids(False)
    assert str(memory.pk) in ids(True)


def test_entity_proposals_render_in_the_review_queue_and_page(agent, api, reviewers, client):
    proposal_id = _post(api, "entity_create", kind="person", name="Bob Li").json()["id"]
    client.force_login(reviewers[0])
    assert client.get("/review/").status_code == 200
    page = client.get(f"/review/proposals/{proposal_id}/")
    assert page.status_code == 200
    assert "Bob Li" in page.content.decode()


def test_entity_and_link_receipts_read_in_the_admin(agent, api, reviewers):
    from django.contrib.auth.models import User
    from django.test import Client

    from executor.models import Receipt

    a = _entity(api, reviewers, "person", "Carol Wu")
    b = _entity(api, reviewers, "person", "C. Wu")
    assert _run(_post(api, "entity_merge", entity_id=b.pk, into_entity_id=a.pk).json()["id"], reviewers)
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="pw"))
    assert client.get("/admin/executor/receipt/").status_code == 200
    for receipt in Receipt.objects.all():
        assert client.get(f"/admin/executor/receipt/{receipt.pk}/change/").status_code == 200
        assert client.get(f"/admin/proposals/proposal/{receipt.proposal_id}/change/").status_code == 200
    assert client.get("/admin/memory_core/entity/").status_code in (200, 404)
