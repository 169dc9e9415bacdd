"""List filters (django-filter FilterSets): refused values name their field, the schema lists every filter."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import create_payload, factor_fact, make_evidence, make_person, submit
from tests.reviews.test_review_api import person_client

PROBLEM = "application/problem+json"
PROPOSALS, RECEIPTS, AUDIT, QUEUE = (
    "/api/v1/proposals/",
    "/api/v1/receipts/",
    "/api/v1/audit/events/",
    "/api/v1/reviews/queue/",
)
FILTERS = {
    PROPOSALS: {"status", "classification"},
    RECEIPTS: {"proposal", "memory", "dreaming_run"},
    AUDIT: {"memory", "actor", "action", "correlation_id", "since"},
    QUEUE: {"type", "scope", "risk_level", "agent", "reason", "older_than_hours"},
}
# The read context an agent's lists of proposals and receipts are shown in (as GET /memories/{id}/ takes it).
READ_CONTEXT = {PROPOSALS: {"acting_for", "data_zone"}, RECEIPTS: {"acting_for", "data_zone"}}
INVALID = [
    (PROPOSALS, {"status": "nonsense"}),
    (PROPOSALS, {"classification": "nonsense"}),
    (RECEIPTS, {"proposal": "not-a-uuid"}),
    (RECEIPTS, {"memory": "42"}),
    (RECEIPTS, {"dreaming_run": "not-a-uuid"}),
    (AUDIT, {"memory": "not-a-uuid"}),
    (AUDIT, {"actor": "a" * 65}),
    (AUDIT, {"action": "write"}),
    (AUDIT, {"correlation_id": "\x00"}),
    (AUDIT, {"since": "yesterday"}),
    (AUDIT, {"since": "0001-01-01T00:00:00+01:00"}),  # before the first moment Python can hold in UTC
    (QUEUE, {"type": "poem"}),
    (QUEUE, {"risk_level": "extreme"}),
    (QUEUE, {"agent": "a" * 65}),
    (QUEUE, {"older_than_hours": "1.5"}),
    (QUEUE, {"older_than_hours": "-1"}),
    (QUEUE, {"older_than_hours": str(24 * 3650 + 1)}),
]


@pytest.fixture
def clients(agent, api):
    return {"agent": api, "person": person_client(make_person("pm-filters", agent.tenant))}


@pytest.mark.parametrize(
    ("path", "query"), INVALID, ids=[f"{p.split('/')[3]}-{next(iter(q))}" for p, q in INVALID]
)
def test_an_invalid_filter_value_is_a_validation_error_naming_the_field(clients, path, query):
    client = clients["person" if path == QUEUE else "agent"]
    response = client.get(path, query)
    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["code"] == "validation_error"
    assert set(body["errors"]) == set(query)


def test_a_refused_choice_lists_the_valid_ones(api):
    errors = api.get(PROPOSALS, {"status": "nonsense"}).json()["errors"]
    assert errors["status"][0].startswith('"nonsense" is not a valid choice; use one of: pending_review,')


@pytest.mark.parametrize("since", ["2020-01-01T00:00:00+23:59", "2020-01-01T00:00:00-18:00"])
def test_since_is_read_in_utc_whatever_offset_it_names(api, since):
    """PostgreSQL refuses offsets beyond 15:59 (and would abort the transaction): it only ever sees UTC."""
    assert api.get(AUDIT, {"since": since}).status_code == 200


def test_filters_narrow_the_queue(agent, clients):
    submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    queue = clients["person"]
    assert len(queue.get(QUEUE, {"type": "semantic_fact", "agent": agent.agent.name}).json()["results"]) == 1
    assert queue.get(QUEUE, {"agent": "someone-else"}).json()["results"] == []
    assert queue.get(QUEUE, {"older_than_hours": "1"}).json()["results"] == []


def test_queue_queries_do_not_grow_with_rows(agent, clients):
    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert clients["person"].get(QUEUE, {"type": "semantic_fact"}).status_code == 200
        return len(queries)

    submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    few = count()
    for n in range(10):
        fact = factor_fact(content={"statement": f"fact {n}"}, dedupe_key=f"filters:{n}")
        submit(agent.agent, create_payload(fact, [make_evidence(agent.agent)]))
    assert count() == few


@pytest.mark.parametrize("path", list(FILTERS))
def test_schema_lists_each_filter_and_the_cursor(db, anonymous, path):
    operation = anonymous.get("/api/schema/?format=json").json()["paths"][path]["get"]
    assert {p["name"] for p in operation["parameters"] if p["in"] == "query"} == FILTERS[path] | {
        "cursor",
        "limit",
        *READ_CONTEXT.get(path, set()),
    }
