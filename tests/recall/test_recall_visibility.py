"""What recall hides and when: lifecycle states, TTL, validity windows, tenants, fences; and its cursor."""

from datetime import timedelta

from django.utils import timezone

from memory_core.models import AccessEvent, AccessEventItem, Memory
from provenance.services import invalidate_evidence_revision
from tests.lifecycle.test_lifecycle_verbs import drive


def ids(response) -> set[str]:
    assert response.status_code == 200, response.content
    return {item["memory"]["memory_id"] for item in response.json()["results"]}


def search(api, query="", **body):
    return api.post("/api/v1/recall/search", {"query": query, **body}, format="json")


def test_expired_revoked_and_deleted_are_hidden_by_default(agent, api, remember):
    kept, expired, revoked, deleted = (remember(f"cadence note {n}") for n in range(4))
    for memory, verb in [(expired, "expire"), (revoked, "revoke"), (deleted, "delete")]:
        drive(agent, memory, verb, [])
    assert ids(search(api, "cadence")) == {str(kept.id)}
    assert ids(search(api, "cadence", include_inactive=True)) == {str(kept.id), str(expired.id)}


def test_get_shows_revoked_with_reason_and_deleted_as_a_tombstone(agent, api, remember):
    revoked, deleted = remember("overturned hypothesis"), remember("gone note")
    drive(agent, revoked, "revoke", [])
    drive(agent, deleted, "delete", [])
    revoked_body = api.get(f"/api/v1/memories/{revoked.id}/").json()
    deleted_body = api.get(f"/api/v1/memories/{deleted.id}/").json()
    assert (revoked_body["memory"]["state"], revoked_body["memory"]["state_reason"]) == (
        "revoked",
        "no longer true",
    )
    assert deleted_body["return_mode"] == "metadata_only"
    assert deleted_body["memory"]["state"] == "deleted" and "content" not in deleted_body["memory"]


def test_ttl_past_is_hidden_before_the_sweep_runs(api, remember):
    memory = remember("short lived note", ttl_seconds=60)
    Memory.objects.filter(pk=memory.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert ids(search(api, "short")) == set()
    assert ids(search(api, "short", include_inactive=True)) == {str(memory.id)}


def test_valid_at_filters_on_the_validity_window(api, remember):
    now = timezone.now()
    old = remember(
        "regime note",
        valid_from=(now - timedelta(days=30)).isoformat(),
        valid_to=(now - timedelta(days=10)).isoformat(),
    )
    current = remember("regime note", valid_from=(now - timedelta(days=10)).isoformat())
    at = lambda days: {"valid_at": (now - timedelta(days=days)).isoformat()}  # noqa: E731
    assert ids(search(api, "regime", filters=at(20))) == {str(old.id)}
    assert ids(search(api, "regime", filters=at(1))) == {str(current.id)}


def test_recall_never_crosses_tenants(api, other_agent, remember):
    remember("shared word", handle=other_agent)
    assert ids(search(api, "shared")) == set()


def test_invalidated_evidence_fences_the_memory_at_once(agent, api, remember):
    memory = remember("momentum works")
    revision = memory.evidence_links.get().evidence_revision
    invalidate_evidence_revision(revision=revision, reason="look-ahead bias")
    body = api.get(f"/api/v1/memories/{memory.id}/").json()
    assert body["return_mode"] == "metadata_only"
    assert body["memory"]["state"] == "fenced" and body["memory"]["fenced"] is True
    assert search(api, "momentum").json()["results"][0]["return_mode"] == "metadata_only"


def test_cursor_pages_through_results_once(api, remember):
    made = {str(remember(f"paging note {n}").id) for n in range(5)}
    seen, cursor = [], None
    for _ in range(5):
        body = search(api, "paging", limit=2, cursor=cursor).json()
        seen += [item["memory"]["memory_id"] for item in body["results"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == 5 and set(seen) == made


def test_cursor_is_bound_to_its_query_and_agent(api, other_agent, remember):
    for n in range(3):
        remember(f"bound note {n}")
    cursor = search(api, "bound", limit=1).json()["next_cursor"]
    other_query = search(api, "other", limit=1, cursor=cursor)
    other_agent_response = search(other_agent.client, "bound", limit=1, cursor=cursor)
    assert (other_query.status_code, other_query.json()["code"]) == (400, "invalid_cursor")
    assert other_agent_response.status_code == 400


def test_every_recall_is_audited_with_items_and_modes(agent, api, remember):
    memory = remember("audited note")
    body = search(api, "audited", policy_context={"correlation_id": "corr-1"}).json()
    event = AccessEvent.objects.get(pk=body["recall_id"])
    assert (event.action, event.outcome, event.query, event.correlation_id) == (
        "search",
        "ok",
        "audited",
        "corr-1",
    )
    assert event.policy_fingerprint
    assert list(AccessEventItem.objects.filter(event=event).values_list("memory_id", "revision", "mode")) == [
        (memory.id, memory.revision, "raw")
    ]


def test_superseding_update_closes_the_old_window_and_valid_at_finds_either_version(agent, api, remember):
    from tests.factories import apply_released, make_evidence, owner_context, submit

    memory = remember("Alice prefers weekly summaries")
    before_update = timezone.now()
    update = submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(memory.id),
            "base_revision": 1,
            "changes": {"content": {"statement": "Alice prefers daily summaries"}},
            "evidence": [make_evidence(agent.agent).binding()],
            "policy_context": owner_context(),
        },
    )
    assert apply_released(update).outcome == "applied"
    first = memory.history.get(revision=1)
    assert first.valid_to is not None and first.valid_to >= before_update

    def statements(**filters):
        body = search(api, "summaries", filters=filters).json()
        return [(i["memory"]["revision"], i["memory"]["content"]["statement"]) for i in body["results"]]

    assert statements(valid_at=before_update.isoformat()) == [(1, "Alice prefers weekly summaries")]
    assert statements(valid_at=timezone.now().isoformat()) == [(2, "Alice prefers daily summaries")]
    assert statements() == [(2, "Alice prefers daily summaries")]


def test_valid_at_never_brings_back_a_revoked_memory(agent, api, remember):
    memory = remember("overturned factor view")
    moment = timezone.now()
    drive(agent, memory, "revoke", [])
    assert ids(search(api, "overturned", filters={"valid_at": moment.isoformat()})) == set()
