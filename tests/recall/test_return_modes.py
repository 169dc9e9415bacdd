"""Each return mode on get and search; secrets never appear in a masked, metadata-only or denied body."""

import pytest

from memory_core.models import AccessEvent
from tests.factories import apply_released, approve, create_payload, make_evidence, make_person, submit


def search(api, query="", **body):
    response = api.post("/api/v1/recall/search", {"query": query, **body}, format="json")
    assert response.status_code == 200, response.content
    return response


def modes(response) -> dict[str, str]:
    return {item["memory"]["memory_id"]: item["return_mode"] for item in response.json()["results"]}


def test_internal_memory_is_raw_with_evidence_and_matched_terms(api, remember):
    memory = remember("Alice prefers weekly summaries")
    body = search(api, "weekly").json()
    item = body["results"][0]
    assert item["return_mode"] == "raw"
    assert item["memory"]["content"]["statement"] == "Alice prefers weekly summaries"
    assert item["memory"]["evidence"][0]["status"] == "valid"
    assert item["matched_terms"] == ["weekly"]
    assert item["consumable_text"] == "Alice prefers weekly summaries"
    assert item["memory"]["memory_id"] == str(memory.id)


def test_a_served_memory_lists_its_evidence_as_its_proposal_froze_it(agent, api):
    cited = [make_evidence(agent.agent) for _ in range(3)]
    memory = {
        "subject": {"kind": "user", "id": "pm-alice"},
        "scope": "user",
        "type": "preference",
        "content": {"statement": "Alice prefers weekly summaries"},
        "sensitivity": "internal",
    }
    proposal = submit(agent.agent, {**create_payload(memory, cited), "identified_by_client": True})
    for n in range(proposal.required_approvals):
        approve(make_person(f"cites-{n}", agent.tenant), proposal)
    assert apply_released(proposal).outcome == "applied"
    item = search(api, "weekly").json()["results"][0]
    frozen = sorted(
        (revision.binding() for revision in cited), key=lambda b: (b["evidence_id"], b["revision"])
    )
    assert proposal.evidence == frozen  # the proposal's own order: by evidence, then revision
    assert item["memory"]["evidence"] == [{**binding, "status": "valid"} for binding in frozen]


def test_confidential_memory_is_masked_without_any_original_text(api, remember, marker):
    remember(
        f"salary band {marker}",
        sensitivity="confidential",
        subject={"kind": "user", "id": "bob"},
        content={"statement": f"salary band {marker}", "preference_value": 42},
    )
    response = search(api, "salary")
    item = response.json()["results"][0]
    assert item["return_mode"] == "masked"
    assert item["memory"]["content"] == {"statement": "***", "preference_value": 42}
    assert item["matched_terms"] == [] and item["consumable_text"] == "***"
    assert marker not in response.content.decode()
    assert "salary" not in response.content.decode().replace('"query"', "")


def test_confidential_memory_of_the_callers_own_subject_is_raw(api, remember, marker):
    remember(f"salary band {marker}", sensitivity="confidential")  # subject user:pm-alice
    body = {"policy_context": {"acting_for_subject": {"kind": "user", "id": "pm-alice"}}}
    assert search(api, "salary", **body).json()["results"][0]["return_mode"] == "raw"


def test_restricted_memory_is_metadata_only(api, remember, marker):
    memory = remember(f"merger codename {marker}", sensitivity="restricted")
    response = api.get(f"/api/v1/memories/{memory.id}/")
    body = response.json()
    assert body["return_mode"] == "metadata_only"
    assert "content" not in body["memory"] and "evidence" not in body["memory"]
    assert marker not in response.content.decode()


def test_external_zone_gets_summaries_and_never_sensitive_items(api, remember, marker):
    plain = remember(f"weekly digest {marker}")
    hidden = remember(f"weekly merger {marker}", sensitivity="confidential")
    response = search(api, "weekly", policy_context={"data_zone": "external"})
    assert modes(response) == {str(plain.id): "summary"}
    assert marker not in response.content.decode()
    assert str(hidden.id) not in response.content.decode()


def test_one_search_mixes_modes(api, remember):
    raw = remember("desk note alpha")
    masked = remember("desk note beta", sensitivity="confidential", subject={"kind": "user", "id": "bob"})
    meta = remember("desk note gamma", sensitivity="restricted")
    assert modes(search(api, "desk")) == {
        str(raw.id): "raw",
        str(masked.id): "masked",
        str(meta.id): "metadata_only",
    }


def test_denied_items_never_take_result_slots(api, remember):
    for n in range(3):
        remember(f"ledger entry {n}", sensitivity="confidential", confidence=1.0)
    allowed = remember("ledger entry public", confidence=0.1)
    response = search(api, "ledger", limit=1, policy_context={"data_zone": "external"})
    assert [item["memory"]["memory_id"] for item in response.json()["results"]] == [str(allowed.id)]
    event = AccessEvent.objects.get(pk=response.json()["recall_id"])
    assert event.omitted_count == 3
    assert "omitted" not in response.content.decode()


@pytest.mark.parametrize("zone", ["external"])
def test_denied_get_looks_exactly_like_a_missing_memory_and_both_are_audited(api, remember, zone):
    secret = remember("vault code", sensitivity="restricted")
    denied = api.get(f"/api/v1/memories/{secret.id}/?data_zone={zone}")
    missing = api.get("/api/v1/memories/00000000-0000-4000-8000-000000000000/")
    assert denied.status_code == missing.status_code == 404
    assert denied.json() == missing.json()
    outcomes = set(AccessEvent.objects.filter(action="get").values_list("outcome", flat=True))
    assert outcomes == {"denied", "not_found"}
