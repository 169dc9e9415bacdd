"""The hand-built INSERTs store exactly what the objects held: what a submit answers (built from
the objects it inserted) is what a later read of the stored rows answers, for awkward text too."""

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.inserts import insert_statement, run_together
from proposals.models import OutboxEntry, Proposal
from tests.factories import create_payload, make_evidence, user_preference

AWKWARD = [
    'quotes " and \\ backslashes, a {brace} and a ,comma',
    "unicode: Größe, 収益率, emoji 📈, right-to-left עברית",
    "json-looking: {\"a\": [1, 2]} and NULL and 'single quotes'",
    "inner whitespace: a\ttab, a\nnewline and a\r\nCRLF",
]


@pytest.mark.parametrize("text", AWKWARD)
def test_what_a_submit_answers_is_what_was_stored(agent, api, text):
    memory = user_preference(
        content={"statement": text, "preference_key": "k", "preference_value": text}, confidence=0.1 + 0.2
    )
    payload = {**create_payload(memory, [make_evidence(agent.agent)]), "rationale": text}
    submitted = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex)
    assert submitted.status_code == 201, submitted.content
    stored = api.get(f"/api/v1/proposals/{submitted.json()['id']}/")
    assert stored.json() == submitted.json()
    proposal = Proposal.objects.get(pk=submitted.json()["id"])
    assert proposal.rationale == text and proposal.fields["content"]["statement"] == text
    assert proposal.fields["confidence"] == 0.1 + 0.2  # a float keeps every digit


def test_a_released_proposals_outbox_row_is_stored_as_built(agent, api):
    payload = create_payload(user_preference(), [make_evidence(agent.agent)])
    answer = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="outbox-row")
    entry = OutboxEntry.objects.get(proposal_id=answer.json()["id"])
    assert (entry.status, entry.action_digest, entry.tenant_id) == (
        "pending",
        answer.json()["action_digest"],
        agent.tenant.id,
    )
    assert entry.available_at <= entry.created_at


def test_run_together_is_one_statement_on_postgresql_and_keeps_order_elsewhere(agent, api):
    payload = create_payload(user_preference(), [make_evidence(agent.agent)])
    proposal_id = api.post(
        "/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="together"
    ).json()["id"]
    source = Proposal.objects.get(pk=proposal_id)
    copies = [
        OutboxEntry(
            tenant_id=source.tenant_id, proposal=source, action_digest=source.action_digest, available_at=when
        )
        for when in (source.created_at, source.updated_at)
    ]
    OutboxEntry.objects.filter(proposal=source).delete()
    with CaptureQueriesContext(connection) as queries:
        run_together([insert_statement(copies[:1]), insert_statement(copies[1:])])
    assert len(queries.captured_queries) == (1 if connection.vendor == "postgresql" else 2)
    assert sorted(
        OutboxEntry.objects.filter(proposal=source).values_list("available_at", flat=True)
    ) == sorted([source.created_at, source.updated_at])
    assert all(not copy._state.adding for copy in copies)


def test_objects_are_marked_saved_only_when_the_statement_ran(agent, api):
    from django.db import IntegrityError, transaction

    payload = create_payload(user_preference(), [make_evidence(agent.agent)])
    answer = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="twice").json()
    stored = OutboxEntry.objects.get(proposal_id=answer["id"])
    twin = OutboxEntry(
        id=stored.id,  # the same key: the INSERT fails
        tenant_id=stored.tenant_id,
        proposal_id=stored.proposal_id,
        action_digest=stored.action_digest,
        available_at=stored.available_at,
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        run_together([insert_statement([twin])])
    assert twin._state.adding
