"""The policy's reads (the acting-for grant and the cited evidence) are one statement per submit
and two per batch; every way a grant or a citation is not good is still refused, item by item."""

import uuid
from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from evidence.models import EvidenceRevision
from proposals.models import Proposal
from tenancy.models import Delegation
from tenancy.services import grant_delegation
from tests.factories import create_payload, make_agent, make_evidence, owner_context, user_preference

BOB = {"kind": "user", "id": "bob"}
BATCH = "/api/v1/proposals/batch"


def _for_bob(agent, evidence=None) -> dict:
    evidence = [make_evidence(agent.agent)] if evidence is None else evidence
    return create_payload(user_preference(subject=BOB), evidence, owner_context(BOB))


def _submit(client, payload, key=None):
    return client.post(
        "/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY=key or uuid.uuid4().hex
    )


def _unknown_binding() -> dict:
    return {"evidence_id": str(uuid.uuid4()), "revision": 1, "content_hash": "0" * 64}


def test_the_grant_and_the_evidence_are_read_in_one_statement(agent, api):
    payload = create_payload(user_preference(), [make_evidence(agent.agent)])  # acts for pm-alice
    with CaptureQueriesContext(connection) as queries:
        assert _submit(api, payload).status_code == 201
    sql = [q["sql"] for q in queries.captured_queries]
    grant_reads = [q for q in sql if Delegation._meta.db_table in q]
    evidence_reads = [q for q in sql if EvidenceRevision._meta.db_table in q and q.startswith("SELECT")]
    assert grant_reads == evidence_reads and len(grant_reads) == 1, sql


def test_a_granted_subject_citing_unknown_evidence_is_judged_on_the_evidence(agent, api):
    grant_delegation(agent=agent.agent, subject=BOB)
    payload = _for_bob(agent)
    payload["evidence"] = [_unknown_binding()]
    response = _submit(api, payload)
    assert response.status_code != 403, response.content  # the grant was read though no revision matched
    assert Proposal.objects.get().policy_facts["evidence"] == "unknown"


def test_an_ungranted_subject_citing_unknown_evidence_is_refused(agent, api):
    payload = _for_bob(agent)
    payload["evidence"] = [_unknown_binding()]
    response = _submit(api, payload)
    assert (response.status_code, response.json()["code"]) == (403, "acting_for_not_granted")
    assert not Proposal.objects.exists()


def test_a_revoked_grant_is_refused_with_valid_evidence(agent, api):
    grant = grant_delegation(agent=agent.agent, subject=BOB)
    assert _submit(api, _for_bob(agent)).status_code == 201
    Delegation.objects.filter(pk=grant.pk).update(revoked_at=timezone.now())
    response = _submit(api, _for_bob(agent))
    assert (response.status_code, response.json()["code"]) == (403, "acting_for_not_granted")


def test_an_expired_grant_is_refused_with_valid_evidence(agent, api):
    grant_delegation(agent=agent.agent, subject=BOB, expires_at=timezone.now() - timedelta(seconds=1))
    response = _submit(api, _for_bob(agent))
    assert (response.status_code, response.json()["code"]) == (403, "acting_for_not_granted")


def test_another_agents_grant_for_the_subject_is_no_grant(agent, api):
    colleague = make_agent("quant-desk", "colleague-agent", acts_for=(BOB,))
    assert _submit(colleague.client, _for_bob(colleague)).status_code == 201
    response = _submit(api, _for_bob(agent))
    assert (response.status_code, response.json()["code"]) == (403, "acting_for_not_granted")


def test_another_tenants_evidence_stays_unknown_under_a_granted_subject(agent, other_agent, api):
    payload = create_payload(user_preference(), [make_evidence(other_agent.agent)])
    assert _submit(api, payload).status_code == 422
    assert Proposal.objects.get().policy_facts["evidence"] == "unknown"


def test_a_batch_judges_each_items_subject_on_its_own(agent, api):
    grant_delegation(agent=agent.agent, subject=BOB)
    carol = {"kind": "user", "id": "carol"}
    evidence = [make_evidence(agent.agent)]
    items = [
        {"idempotency_key": "alice", "proposal": create_payload(user_preference(), evidence)},
        {
            "idempotency_key": "carol",
            "proposal": create_payload(user_preference(subject=carol), evidence, owner_context(carol)),
        },
        {"idempotency_key": "bob", "proposal": _for_bob(agent, evidence)},
        {"idempotency_key": "unknown", "proposal": {**_for_bob(agent), "evidence": [_unknown_binding()]}},
    ]
    results = api.post(BATCH, {"items": items}, format="json").json()["results"]
    assert [r["status"] for r in results][:3] == [201, 403, 201]
    assert results[1]["problem"]["code"] == "acting_for_not_granted"
    assert results[3]["status"] != 403
    unknown = Proposal.objects.get(idempotency_key="unknown")
    assert unknown.policy_facts["evidence"] == "unknown"


def test_a_grant_covers_its_own_kind_of_subject_only_in_a_batch_of_many_subjects(agent, api):
    """Grants are read by subject id for the whole batch: the kind must still match exactly."""
    grant_delegation(agent=agent.agent, subject=BOB)
    others = [{"kind": "org", "id": "bob"}, {"kind": "user", "id": "carol"}, {"kind": "user", "id": "Bob"}]
    items = [
        {
            "idempotency_key": f"s{n}",
            "proposal": _for_bob(agent) if subject is None else _acting_for(agent, subject),
        }
        for n, subject in enumerate([None, *others])
    ]
    results = api.post(BATCH, {"items": items}, format="json").json()["results"]
    assert [r["status"] for r in results] == [201, 403, 403, 403]
    assert {r["problem"]["code"] for r in results[1:]} == {"acting_for_not_granted"}


def _acting_for(agent, subject: dict) -> dict:
    return create_payload(
        user_preference(subject=subject), [make_evidence(agent.agent)], owner_context(subject)
    )


def test_a_grant_revoked_after_a_batch_is_refused_in_the_next(agent, api):
    grant = grant_delegation(agent=agent.agent, subject=BOB)
    first = [{"idempotency_key": "one", "proposal": _for_bob(agent)}]
    assert api.post(BATCH, {"items": first}, format="json").json()["created"] == 1
    Delegation.objects.filter(pk=grant.pk).update(revoked_at=timezone.now())
    second = [{"idempotency_key": "two", "proposal": _for_bob(agent)}]
    assert api.post(BATCH, {"items": second}, format="json").json()["results"][0]["status"] == 403


def test_a_single_submit_records_its_history_row(agent, api):
    """The history row is copied from the stored row: every tracked column, no user for an agent."""
    response = _submit(api, create_payload(user_preference(), [make_evidence(agent.agent)]))
    proposal = Proposal.objects.get(pk=response.json()["id"])
    (row,) = proposal.history.all()
    assert (row.history_type, row.history_user_id, row.history_change_reason) == ("+", None, None)
    tracked = [
        f.attname for f in Proposal.history.model._meta.concrete_fields if not f.name.startswith("history_")
    ]
    assert {name: getattr(row, name) for name in tracked} == {
        name: getattr(proposal, name) for name in tracked
    }
    assert proposal.evidence_links.count() == 1 and proposal.outbox_entries.count() == 1


def test_a_submit_writes_its_four_rows_in_one_statement_on_postgresql(agent, api):
    """Proposal, history row, evidence link and outbox row: one round trip on PostgreSQL."""
    payload = create_payload(user_preference(), [make_evidence(agent.agent)])
    with CaptureQueriesContext(connection) as queries:
        assert _submit(api, payload).status_code == 201
    writes = [q["sql"] for q in queries.captured_queries if "INSERT INTO" in q["sql"]]
    assert len(writes) == (1 if connection.vendor == "postgresql" else 4)
    assert sum(sql.count("INSERT INTO") for sql in writes) == 4


def test_the_executor_records_an_applied_proposal_in_its_history(agent, api):
    """The executor's history row is copied by the database: every tracked column as stored."""
    from tests.factories import apply_released

    response = _submit(api, create_payload(user_preference(), [make_evidence(agent.agent)]))
    proposal = Proposal.objects.get(pk=response.json()["id"])
    assert apply_released(proposal).outcome == "applied"
    proposal.refresh_from_db()
    created, executed = proposal.history.order_by("history_id")
    assert (created.history_type, executed.history_type) == ("+", "~")
    assert (executed.status, executed.outcome, executed.history_user_id) == ("applied", "applied", None)
    tracked = [
        f.attname for f in Proposal.history.model._meta.concrete_fields if not f.name.startswith("history_")
    ]
    assert {name: getattr(executed, name) for name in tracked} == {
        name: getattr(proposal, name) for name in tracked
    }
    assert executed.history_date >= created.history_date
