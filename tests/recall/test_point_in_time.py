"""Point-in-time recall (``filters.valid_at``): which revision is served at a moment, and what never is."""

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.factories import apply_released, make_evidence, make_person, owner_context, submit
from tests.lifecycle.test_lifecycle_verbs import drive
from tests.recall.test_recall_visibility import ids, search


def at(moment) -> dict:
    return {"valid_at": moment.isoformat()}


def test_a_memory_deleted_after_the_moment_is_never_served(agent, api, remember):
    kept, deleted = remember("ledger cadence kept"), remember("ledger cadence deleted")
    moment = timezone.now()
    drive(agent, deleted, "delete", [])
    assert ids(search(api, "ledger", filters=at(moment))) == {str(kept.id)}
    assert ids(search(api, "ledger", filters=at(moment), include_inactive=True)) == {str(kept.id)}


def test_a_purged_memory_is_never_served_at_any_moment(agent, api, remember):
    reviewers = [make_person("purge-a", agent.tenant), make_person("purge-b", agent.tenant)]
    purged = remember("ledger cadence purged")
    moment = timezone.now()
    drive(agent, purged, "delete", [])
    assert drive(agent, purged, "purge", reviewers).outcome == "applied"
    for when in (moment - timedelta(days=1), moment, timezone.now()):
        assert ids(search(api, "ledger", filters=at(when), include_inactive=True)) == set()


def test_a_memory_valid_only_from_after_the_moment_is_not_served_then(api, remember):
    now = timezone.now()
    later = remember("ledger cadence later", valid_from=(now + timedelta(days=2)).isoformat())
    assert ids(search(api, "ledger", filters=at(now + timedelta(days=1)))) == set()
    assert ids(search(api, "ledger", filters=at(now + timedelta(days=3)))) == {str(later.id)}


def test_stated_validity_not_write_time_decides_what_was_valid(api, remember):
    before_written = timezone.now() - timedelta(days=5)
    unbounded = remember("ledger cadence unbounded")
    assert ids(search(api, "ledger", filters=at(before_written))) == {str(unbounded.id)}


def test_each_memory_is_served_once_in_its_revision_valid_at_the_moment(agent, api, remember):
    memory = remember("ledger cadence weekly")
    moment = timezone.now()
    update = submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(memory.id),
            "base_revision": 1,
            "changes": {"content": {"statement": "ledger cadence daily"}},
            "evidence": [make_evidence(agent.agent).binding()],
            "policy_context": owner_context(),
        },
    )
    assert apply_released(update).outcome == "applied"

    def served(when):
        body = search(api, "ledger cadence", filters=at(when)).json()
        return [(i["memory"]["revision"], i["memory"]["content"]["statement"]) for i in body["results"]]

    assert served(moment) == [(1, "ledger cadence weekly")]
    assert served(timezone.now()) == [(2, "ledger cadence daily")]


def test_point_in_time_search_queries_do_not_grow_with_hits(api, remember, django_assert_num_queries):
    body = {"query": "ledger", "filters": at(timezone.now())}
    remember("ledger cadence one")
    with CaptureQueriesContext(connection) as one_hit:
        assert len(search(api, **body).json()["results"]) == 1
    for n in range(5):
        remember(f"ledger cadence more {n}")
    with django_assert_num_queries(len(one_hit)):
        assert len(search(api, **body).json()["results"]) == 6
