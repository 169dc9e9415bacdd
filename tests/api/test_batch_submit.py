"""POST /api/v1/proposals/batch: one answer per item, in order; items fail alone; keys replay."""

import json

import pytest

from proposals.models import OutboxEntry, Proposal
from tests.factories import create_payload, make_evidence, user_preference

URL = "/api/v1/proposals/batch"


def _pref(n: int) -> dict:
    return user_preference(
        content={
            "statement": f"Alice prefers cadence {n}",
            "preference_key": f"cadence_{n}",
            "preference_value": f"v{n}",
        }
    )


def _items(agent, count: int, prefix: str = "b") -> list[dict]:
    evidence = [make_evidence(agent.agent)]
    return [
        {"idempotency_key": f"{prefix}-{n}", "proposal": create_payload(_pref(n), evidence)}
        for n in range(count)
    ]


def _post(client, items):
    return client.post(URL, {"items": items}, format="json")


def test_results_come_back_in_order_each_with_its_proposal_and_outbox_row(agent, api):
    items = _items(agent, 5)
    response = _post(api, items)
    assert response.status_code == 200, response.content
    body = response.json()
    assert [r["index"] for r in body["results"]] == list(range(5))
    assert [r["idempotency_key"] for r in body["results"]] == [f"b-{n}" for n in range(5)]
    assert {r["status"] for r in body["results"]} == {201}
    assert (body["created"], body["replayed"], body["refused"]) == (5, 0, 0)
    ids = [r["proposal"]["id"] for r in body["results"]]
    stored = {str(p.id): p for p in Proposal.objects.filter(id__in=ids)}
    for n, proposal_id in enumerate(ids):
        proposal = stored[proposal_id]
        assert proposal.idempotency_key == f"b-{n}"
        assert proposal.fields["content"]["preference_key"] == f"cadence_{n}"
        assert proposal.policy_fingerprint and proposal.matched_rule
    assert OutboxEntry.objects.filter(proposal_id__in=ids).count() == 5


def test_a_bad_item_fails_alone_and_the_others_stand(agent, api):
    items = _items(agent, 3)
    items[1]["proposal"]["memory"]["confidence"] = 7  # out of range
    response = _post(api, items)
    results = response.json()["results"]
    assert [r["status"] for r in results] == [201, 400, 201]
    assert results[1]["problem"]["code"] == "validation_error"
    assert "proposal" not in results[1]
    assert Proposal.objects.count() == 2


def test_a_policy_denial_is_reported_in_place_with_its_proposal_id(agent, api):
    items = _items(agent, 2)
    items[0]["proposal"]["evidence"][0]["content_hash"] = "0" * 64
    results = _post(api, items).json()["results"]
    assert results[0]["status"] == 422
    assert results[0]["problem"]["code"] == "evidence_mismatch"
    assert Proposal.objects.get(pk=results[0]["problem"]["proposal_id"]).status == Proposal.Status.DENIED
    assert results[1]["status"] == 201


def test_replaying_a_whole_batch_returns_the_same_proposals_and_writes_nothing(agent, api):
    items = _items(agent, 4)
    first = _post(api, items).json()
    again = _post(api, items).json()
    assert [r["status"] for r in again["results"]] == [200] * 4
    assert all(r["replayed"] for r in again["results"])
    assert (again["created"], again["replayed"]) == (0, 4)
    assert [r["proposal"]["id"] for r in again["results"]] == [r["proposal"]["id"] for r in first["results"]]
    assert Proposal.objects.count() == OutboxEntry.objects.count() == 4


def test_a_batch_item_and_a_single_submit_share_the_key_space(agent, api):
    items = _items(agent, 1, prefix="shared")
    single = api.post(
        "/api/v1/proposals/", items[0]["proposal"], format="json", HTTP_IDEMPOTENCY_KEY="shared-0"
    )
    result = _post(api, items).json()["results"][0]
    assert result["status"] == 200 and result["proposal"]["id"] == single.json()["id"]


def test_the_same_key_with_another_body_conflicts_per_item(agent, api):
    items = _items(agent, 2)
    _post(api, items)
    items[1]["proposal"]["rationale"] = "changed my mind"
    results = _post(api, items).json()["results"]
    assert [r["status"] for r in results] == [200, 409]
    assert results[1]["problem"]["code"] == "idempotency_conflict"


def test_an_item_without_a_usable_key_is_refused_alone(agent, api):
    items = _items(agent, 3)
    items[0]["idempotency_key"] = ""
    del items[2]["idempotency_key"]
    results = _post(api, items).json()["results"]
    assert [r["status"] for r in results] == [400, 201, 400]
    assert {results[0]["problem"]["code"], results[2]["problem"]["code"]} == {"idempotency_key_required"}


def test_lying_tenant_or_agent_fields_in_an_item_are_refused(agent, other_agent, api):
    items = _items(agent, 3)
    items[0]["tenant_id"] = str(other_agent.tenant.id)
    items[1]["proposal"]["submitted_by"] = "intruder-agent"
    results = _post(api, items).json()["results"]
    assert [r["status"] for r in results] == [400, 400, 201]
    assert "tenant_id" in results[0]["problem"]["errors"]
    assert "submitted_by" in results[1]["problem"]["errors"]
    assert Proposal.objects.get().tenant_id == agent.tenant.id


def test_another_tenants_evidence_is_not_valid_evidence_here(agent, other_agent, api):
    items = _items(agent, 1)
    foreign = make_evidence(other_agent.agent)
    items[0]["proposal"]["evidence"] = [foreign.binding()]
    result = _post(api, items).json()["results"][0]
    assert result["status"] >= 400
    assert not Proposal.objects.filter(tenant=agent.tenant, status=Proposal.Status.RELEASED).exists()


def test_keys_are_per_agent_in_batches_too(agent, other_agent, api):
    items = _items(agent, 2)
    mine = _post(api, items).json()["results"]
    other_items = _items(other_agent, 2)
    theirs = _post(other_agent.client, other_items).json()["results"]
    assert [r["status"] for r in theirs] == [201, 201]
    assert {r["proposal"]["id"] for r in mine}.isdisjoint({r["proposal"]["id"] for r in theirs})


def test_anonymous_callers_are_refused(db, anonymous):
    assert anonymous.post(URL, {"items": []}, format="json").status_code == 401


def test_envelope_errors_refuse_the_whole_batch(agent, api):
    assert api.post(URL, {"items": []}, format="json").json()["code"] == "validation_error"
    assert api.post(URL, {"items": "nope"}, format="json").status_code == 400
    assert api.post(URL, {"items": [1, 2]}, format="json").status_code == 400
    assert api.post(URL, {"items": [], "tenant": "x"}, format="json").status_code == 400
    assert Proposal.objects.count() == 0


def test_more_items_than_allowed_is_refused(agent, api, settings):
    settings.CUSTODIAN_MAX_BATCH_ITEMS = 3
    response = _post(api, _items(agent, 4))
    assert response.status_code == 413
    assert response.json()["code"] == "batch_too_large"
    assert Proposal.objects.count() == 0


def test_a_body_over_the_batch_limit_is_refused_as_too_large(agent, api, settings):
    settings.CUSTODIAN_MAX_BATCH_BODY_BYTES = 2000
    items = _items(agent, 10)
    assert len(json.dumps({"items": items})) > 2000
    response = _post(api, items)
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert Proposal.objects.count() == 0


def test_the_batch_body_limit_is_larger_than_a_single_submits(agent, api, settings):
    settings.CUSTODIAN_MAX_BODY_BYTES = 10_000
    items = _items(agent, 30)
    size = len(json.dumps({"items": items}))
    assert size > settings.CUSTODIAN_MAX_BODY_BYTES
    body = _post(api, items).json()
    assert body["created"] == 30


def test_a_chunked_batch_is_refused_with_411(agent, api):
    response = api.post(
        URL, json.dumps({"items": []}), content_type="application/json", HTTP_TRANSFER_ENCODING="chunked"
    )
    assert response.status_code == 411


def test_the_batch_is_in_the_openapi_schema(anonymous):
    schema = anonymous.get("/api/schema/?format=json").json()
    post = schema["paths"]["/api/v1/proposals/batch"]["post"]
    assert post["operationId"] == "proposals_batch_create"
    assert "200" in post["responses"] and "413" in post["responses"]


def test_a_key_repeated_within_a_batch_replays_its_first_use_or_conflicts(agent, api):
    items = _items(agent, 3)
    items.append({"idempotency_key": "b-0", "proposal": items[0]["proposal"]})
    items.append({"idempotency_key": "b-1", "proposal": items[2]["proposal"]})
    results = _post(api, items).json()["results"]
    assert [r["status"] for r in results] == [201, 201, 201, 200, 409]
    assert results[3]["proposal"]["id"] == results[0]["proposal"]["id"]
    assert results[4]["problem"]["proposal_id"] == results[1]["proposal"]["id"]
    assert Proposal.objects.count() == 3


def test_an_item_refused_while_freezing_fails_alone(agent, api, applied_memory):
    items = _items(agent, 2)
    stale = {
        "action": "update",
        "memory_id": str(applied_memory.id),
        "base_revision": applied_memory.revision + 1,
        "changes": {"confidence": 0.2},
    }
    items.insert(1, {"idempotency_key": "stale", "proposal": stale})
    results = _post(api, items).json()["results"]
    assert [r["status"] for r in results] == [201, 409, 201]
    assert results[1]["problem"]["code"] == "base_revision_stale"


def test_every_created_proposal_has_its_history_row(agent, api):
    ids = [r["proposal"]["id"] for r in _post(api, _items(agent, 6)).json()["results"]]
    assert Proposal.history.filter(id__in=ids, history_type="+").count() == 6


def test_statements_do_not_grow_with_writes_per_item(agent, api, django_assert_max_num_queries):
    items = _items(agent, 40)
    # The policy's reads (delegations, evidence) are one query each for the whole batch, the
    # writes one per table: nothing per item.
    with django_assert_max_num_queries(14):
        assert _post(api, items).json()["created"] == 40


@pytest.mark.services
def test_cache_round_trips_do_not_grow_with_the_items(agent, api, monkeypatch):
    """The throttle and the registration pointer are looked up once per batch, not once per item."""
    import redis.connection

    sent: list[int] = []
    send = redis.connection.AbstractConnection.send_packed_command

    def counting(connection, command, check_health=True):
        sent.append(1)
        return send(connection, command, check_health)

    def round_trips(count: int, prefix: str) -> int:
        items = _items(agent, count, prefix)
        sent.clear()
        monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", counting)
        assert _post(api, items).json()["created"] == count
        monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", send)
        return len(sent)

    round_trips(2, "warm")
    assert round_trips(2, "two") == round_trips(6, "six")  # the rate charged twice (request, items)
