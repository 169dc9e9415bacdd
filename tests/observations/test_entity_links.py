"""Links to entities: a memory is ``about`` a tenant's canonical entity, proposed, bound and verified."""

import itertools

import pytest
from django.core.management import CommandError, call_command

from executor.models import Receipt
from executor.verification import verify_tenant
from memory_core.models import Entity, MemoryLink
from proposals.models import Proposal
from tests.factories import apply_released, approve, make_person, owner_context
from tests.lifecycle.test_lifecycle_verbs import drive
from tests.observations.test_entities import _entity
from tests.observations.test_entities import _post as _entity_post
from tests.registrations.publishing import publish_changed_default

_keys = itertools.count()


@pytest.fixture
def reviewers(agent):
    return [make_person("el-rev-a", agent.tenant), make_person("el-rev-b", agent.tenant)]


@pytest.fixture
def about_allowed(agent):
    publish_changed_default(
        agent,
        lambda document: document["types"]["preference"].update(links={"relations": ["about", "supports"]}),
    )


def _about(memory, entity_id, relation="about", **link) -> dict:
    return {
        "action": "link",
        "memory_id": str(memory.pk),
        "base_revision": memory.revision,
        "link": {"to_entity_id": str(entity_id), "relation": relation, **link},
        "policy_context": owner_context(),
    }


def _post(client, body):
    return client.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY=f"el-{next(_keys)}")


def _run(proposal_id, reviewers) -> Receipt:
    proposal = Proposal.objects.get(pk=proposal_id)
    for person in reviewers[: proposal.required_approvals]:
        approve(person, proposal)
    return apply_released(proposal)


def _linked(agent, api, remember, reviewers):
    acme = _entity(api, reviewers, "organisation", "ACME Capital")
    memory = remember("Alice prefers ACME Capital research notes")
    response = _post(api, _about(memory, acme.pk))
    assert response.status_code == 201, response.json()
    assert not MemoryLink.objects.exists()  # a proposal writes nothing
    receipt = _run(response.json()["id"], reviewers)
    assert receipt.outcome == "applied", receipt.reason
    return memory, acme, receipt


def test_a_memory_is_linked_about_an_entity_by_the_executor(agent, api, remember, about_allowed, reviewers):
    memory, acme, receipt = _linked(agent, api, remember, reviewers)
    link = MemoryLink.objects.get()
    assert (link.source_id, link.target_id, link.target_entity_id, link.relation) == (
        memory.pk,
        None,
        acme.pk,
        "about",
    )
    assert link.evidence["from"] and link.evidence["to_entity"] == {
        "entity_id": str(acme.pk),
        "receipt_id": str(acme.receipt_id),
    }
    assert receipt.effects["linked"]["to_entity_id"] == str(acme.pk)
    assert verify_tenant(agent.tenant.pk).ok


def test_entity_ends_are_about_only_in_this_tenant_and_never_a_merged_one(
    agent, other_agent, api, remember, about_allowed, reviewers
):
    memory = remember("Alice prefers ACME Capital research notes")
    acme = _entity(api, reviewers, "organisation", "ACME Capital")
    refused = _post(api, _about(memory, acme.pk, relation="supports"))
    assert (refused.status_code, refused.json()["code"]) == (422, "link_relation_not_allowed")
    theirs = _entity(other_agent.client, reviewers_of(other_agent), "organisation", "Theirs Ltd")
    foreign = _post(api, _about(memory, theirs.pk))
    assert (foreign.status_code, foreign.json()["code"]) == (422, "link_end_not_found")
    both = _post(api, _about(memory, acme.pk, to_memory_id=str(memory.pk), to_revision=1))
    assert both.status_code == 400 and "to_memory_id" in str(both.json())
    dupe = _entity(api, reviewers, "organisation", "ACME Capitol")
    merge = _entity_post(api, "entity_merge", entity_id=dupe.pk, into_entity_id=acme.pk).json()
    assert _run(merge["id"], reviewers).outcome == "applied"
    merged = _post(api, _about(memory, dupe.pk))
    assert (merged.status_code, merged.json()["code"]) == (422, "link_entity_merged")
    assert merged.json()["canonical_entity_id"] == str(acme.pk)
    assert not Proposal.objects.filter(action="link").exists()


def reviewers_of(handle):
    return [make_person("el-their-a", handle.tenant), make_person("el-their-b", handle.tenant)]


def test_an_entity_merged_after_the_proposal_writes_no_link(agent, api, remember, about_allowed, reviewers):
    memory = remember("Alice prefers ACME Capital research notes")
    acme = _entity(api, reviewers, "organisation", "ACME Capital")
    winner = _entity(api, reviewers, "organisation", "ACME Capital Partners")
    link_id = _post(api, _about(memory, acme.pk)).json()["id"]
    merge = _entity_post(api, "entity_merge", entity_id=acme.pk, into_entity_id=winner.pk).json()
    assert _run(merge["id"], reviewers).outcome == "applied"
    receipt = _run(link_id, reviewers)
    assert receipt.outcome == "stale" and "merged" in receipt.reason
    assert not MemoryLink.objects.exists()


def test_recall_shows_the_entity_a_raw_hit_is_about(agent, api, remember, about_allowed, reviewers):
    memory, acme, _ = _linked(agent, api, remember, reviewers)
    body = {"query": "research notes", "context": {"links": 3}, "policy_context": owner_context()}
    response = api.post("/api/v1/recall/search", body, format="json")
    assert response.status_code == 200, response.json()
    [hit] = [i for i in response.json()["results"] if i["memory"]["memory_id"] == str(memory.pk)]
    assert hit["return_mode"] == "raw"
    assert hit["links"] == [
        {
            "relation": "about",
            "direction": "out",
            "entity": {
                "entity_id": str(acme.pk),
                "kind": "organisation",
                "name": "ACME Capital",
                "canonical_entity_id": str(acme.pk),
            },
        }
    ]


# verify_receipts hashes link and entity rows ----------------------------------------------------


def test_a_link_or_entity_altered_behind_the_executor_fails_verification(
    agent, api, remember, about_allowed, reviewers
):
    _memory, acme, _ = _linked(agent, api, remember, reviewers)
    assert verify_tenant(agent.tenant.pk).ok
    link = MemoryLink.objects.get()
    MemoryLink.objects.update(evidence={"from": [], "to_entity": link.evidence["to_entity"]})
    problems = verify_tenant(agent.tenant.pk).problems
    assert problems == [f"link {link.pk}: differs from what receipt {link.receipt_id} wrote"]
    MemoryLink.objects.update(evidence=link.evidence)
    Entity.objects.filter(pk=acme.pk).update(name="ACME Capital (renamed)")
    problems = verify_tenant(agent.tenant.pk).problems
    assert problems == [f"entity {acme.pk}: differs from what receipt {acme.receipt_id} wrote"]
    Entity.objects.filter(pk=acme.pk).update(name="ACME Capital")
    assert verify_tenant(agent.tenant.pk).ok
    Entity.objects.filter(pk=acme.pk).update(aliases=["forged"])
    with pytest.raises(CommandError, match=f"entity {acme.pk}"):
        call_command("verify_receipts")


def test_a_link_removed_or_forged_behind_the_executor_fails_verification(
    agent, api, remember, about_allowed, reviewers
):
    _memory, acme, receipt = _linked(agent, api, remember, reviewers)
    link = MemoryLink.objects.get()
    MemoryLink.objects.all().delete()
    problems = verify_tenant(agent.tenant.pk).problems
    assert problems == [f"link {link.pk}: written by receipt {receipt.id}, now missing"]
    other = remember("Alice prefers terse answers")
    MemoryLink.objects.create(
        tenant=agent.tenant,
        source=other,
        target_entity=acme,
        relation="about",
        scope="user",
        evidence={},
        receipt_id=receipt.id,  # a real receipt, but not the one that wrote this row
        created_at=link.created_at,
    )
    assert any("differs from what receipt" in p for p in verify_tenant(agent.tenant.pk).problems)


def test_a_purged_end_takes_its_link_and_still_verifies(agent, api, remember, about_allowed, reviewers):
    memory, _acme, _ = _linked(agent, api, remember, reviewers)
    for verb in ("delete", "purge"):
        assert drive(agent, memory, verb, reviewers).outcome == "applied"
    assert not MemoryLink.objects.exists()
    assert verify_tenant(agent.tenant.pk).ok


def test_an_entity_link_reads_as_a_sentence_for_its_reviewer(
    agent, api, remember, about_allowed, reviewers, client
):
    memory = remember("Alice prefers ACME Capital research notes")
    acme = _entity(api, reviewers, "organisation", "ACME Capital")
    proposal_id = _post(api, _about(memory, acme.pk)).json()["id"]
    client.force_login(reviewers[0])
    html = client.get(f"/review/proposals/{proposal_id}/").content.decode()
    assert f"Link memory {memory.pk} (revision 1) about entity {acme.pk}." in html


@pytest.mark.django_db(transaction=True)
def test_links_and_entities_survive_an_export_and_import(
    agent, api, remember, about_allowed, reviewers, tmp_path
):
    _memory, acme, _ = _linked(agent, api, remember, reviewers)
    dupe = _entity(api, reviewers, "organisation", "ACME Capitol")
    merge = _entity_post(api, "entity_merge", entity_id=dupe.pk, into_entity_id=acme.pk).json()
    assert _run(merge["id"], reviewers).outcome == "applied"
    before = sorted(MemoryLink.objects.values_list("source_id", "target_entity_id", "relation", "receipt_id"))
    entities = sorted(Entity.objects.values_list("id", "name", "redirect_to_id", "receipt_id"))
    path = tmp_path / "tenant.jsonl"
    call_command("export_tenant", tenant=agent.tenant.name, output=str(path))
    call_command("flush", interactive=False, verbosity=0)
    call_command("import_tenant", input=str(path))  # refused unless the imported chain verifies
    assert (
        sorted(MemoryLink.objects.values_list("source_id", "target_entity_id", "relation", "receipt_id"))
        == before
    )
    assert sorted(Entity.objects.values_list("id", "name", "redirect_to_id", "receipt_id")) == entities


def test_recall_filters_by_entity_across_its_merges(
    agent, other_agent, api, remember, about_allowed, reviewers
):
    acme = _entity(api, reviewers, "organisation", "ACME Capital")
    old = _entity(api, reviewers, "organisation", "ACME Capitol")
    first = remember("Alice prefers research notes from ACME Capital")
    second = remember("Alice prefers research notes on Fridays")
    remember("Alice prefers research notes in French")  # about nothing
    assert _run(_post(api, _about(first, acme.pk)).json()["id"], reviewers).outcome == "applied"
    assert _run(_post(api, _about(second, old.pk)).json()["id"], reviewers).outcome == "applied"
    merge = _entity_post(api, "entity_merge", entity_id=old.pk, into_entity_id=acme.pk).json()
    assert _run(merge["id"], reviewers).outcome == "applied"
    theirs = _entity(other_agent.client, reviewers_of(other_agent), "organisation", "ACME Holdings")

    def about(entity_id, query="research notes"):
        body = {
            "query": query,
            "filters": {"about_entity": str(entity_id)},
            "policy_context": owner_context(),
        }
        response = api.post("/api/v1/recall/search", body, format="json")
        assert response.status_code == 200, response.json()
        return {item["memory"]["memory_id"] for item in response.json()["results"]}

    both = {str(first.pk), str(second.pk)}
    assert about(acme.pk) == both
    assert about(old.pk) == both  # the merged name reaches the same memories
    assert about(acme.pk, query="") == both
    assert about(theirs.pk) == set()  # another tenant's entity selects nothing here
    bad = api.post(
        "/api/v1/recall/search", {"query": "x", "filters": {"about_entity": "nope"}}, format="json"
    )
    assert bad.status_code == 400


def test_entity_ends_cost_the_same_queries_for_more_of_them(agent, api, remember, about_allowed, reviewers):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    _linked(agent, api, remember, reviewers)

    def count() -> int:
        body = {"query": "research notes", "context": {"links": 5}, "policy_context": owner_context()}
        with CaptureQueriesContext(connection) as captured:
            assert api.post("/api/v1/recall/search", body, format="json").status_code == 200
        return len(captured)

    count()
    few = count()
    for n in range(3):
        entity = _entity(api, reviewers, "project", f"Research project {n}")
        memory = remember(f"Alice prefers research notes for project {n}")
        assert _run(_post(api, _about(memory, entity.pk)).json()["id"], reviewers).outcome == "applied"
    assert count() == few  # one query for every entity end, whatever their number
