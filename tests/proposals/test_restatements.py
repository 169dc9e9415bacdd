"""Saying the same thing twice stores it once: a create without a dedupe key claims its statement's."""

import uuid

from django.core.management import call_command

from executor.models import Receipt
from memory_core.models import Memory
from memory_core.statements import is_statement_key, normalised_statement, statement_key
from proposals.models import Proposal
from tests.factories import (
    apply_released,
    approve,
    create_payload,
    make_evidence,
    make_person,
    owner_context,
    submit,
    user_preference,
)

STATEMENT = "Alice prefers weekly summaries"


def _memory(statement: str = STATEMENT, **overrides) -> dict:
    return user_preference(content={"statement": statement, "preference_key": "cadence"}, **overrides)


def _post(agent, api, memory: dict):
    payload = create_payload(memory, [make_evidence(agent.agent)])
    return api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))


def _stored(agent, statement: str = STATEMENT, **overrides) -> Memory:
    payload = create_payload(_memory(statement, **overrides), [make_evidence(agent.agent)])
    proposal = submit(agent.agent, payload)
    if proposal.status == Proposal.Status.PENDING_REVIEW:
        approve(make_person(f"pm-{uuid.uuid4().hex[:6]}", agent.tenant), proposal)
    assert apply_released(proposal).outcome == Receipt.Outcome.APPLIED
    return Memory.objects.get(pk=proposal.target_id)


def _alice_rows() -> int:
    return Memory.objects.filter(subject_id="pm-alice").count()


def test_the_normal_form_ignores_case_spacing_width_and_final_punctuation():
    assert normalised_statement("  Alice  prefers\tWEEKLY summaries. ") == "alice prefers weekly summaries"
    assert normalised_statement("Ｃafé!") == normalised_statement("café")
    assert normalised_statement("Alice prefers weekly") != normalised_statement("Alice prefers daily")


def test_a_restatement_is_denied_naming_the_memory_that_says_it(agent, api):
    held = _stored(agent)
    response = _post(agent, api, _memory("  alice prefers WEEKLY summaries. "))
    body = response.json()
    assert response.status_code == 422, body
    assert body["code"] == "duplicate_of_active_memory"
    assert body["held_by"] == [{"memory_id": str(held.pk), "revision": 1}]
    assert Proposal.objects.get(pk=body["proposal_id"]).status == Proposal.Status.DENIED
    assert _alice_rows() == 1


def test_other_fields_do_not_make_a_restatement_new(agent, api):
    _stored(agent)
    memory = user_preference(content={"statement": STATEMENT, "preference_value": "weekly, on Mondays"})
    assert _post(agent, api, memory).json()["code"] == "duplicate_of_active_memory"


def test_another_subject_scope_type_or_period_is_another_memory(agent, api):
    _stored(agent)
    others = [
        _memory(subject={"kind": "user", "id": "pm-bob"}),
        _memory(scope="session"),
        user_preference(type="episodic_event", content={"statement": STATEMENT}),
        _memory(valid_from="2026-01-01T00:00:00Z"),
    ]
    for memory in others:
        assert _post(agent, api, memory).status_code == 201, memory


def test_a_key_the_agent_chose_keeps_its_own_meaning(agent, api):
    _stored(agent)
    response = _post(agent, api, _memory(dedupe_key="pref:pm-alice:cadence"))
    assert response.status_code == 201, response.json()
    assert response.json()["classification"] == "auto_apply"


def test_a_derived_key_cannot_be_sent(agent, api):
    forged = statement_key({**_memory(), "sensitivity": "internal"})
    response = _post(agent, api, _memory("something new", dedupe_key=forged))
    body = response.json()
    assert response.status_code == 400, body
    assert body["code"] == "validation_error" and "dedupe_key" in body["errors"]
    assert not Proposal.objects.exists()


def test_a_retired_memory_no_longer_holds_its_statement(agent, api):
    held = _stored(agent)
    expire = {
        "action": "expire",
        "memory_id": str(held.pk),
        "base_revision": 1,
        "reason": "no longer true",
        "policy_context": owner_context(),
    }
    assert apply_released(submit(agent.agent, expire)).outcome == Receipt.Outcome.APPLIED
    assert _post(agent, api, _memory()).status_code == 201


def test_rewording_moves_the_key_with_the_statement(agent, api):
    held = _stored(agent)
    update = {
        "action": "update",
        "memory_id": str(held.pk),
        "base_revision": 1,
        "changes": {"content": {"statement": "Alice prefers daily summaries"}},
        "policy_context": owner_context(),
    }
    proposal = submit(agent.agent, update)
    assert is_statement_key(proposal.fields["dedupe_key"])
    if proposal.status == Proposal.Status.PENDING_REVIEW:
        approve(make_person("pm-reword", agent.tenant), proposal)
    assert apply_released(proposal).outcome == Receipt.Outcome.APPLIED
    assert _post(agent, api, _memory()).status_code == 201  # the old wording is free again
    assert _post(agent, api, _memory("Alice prefers daily summaries")).status_code == 422


def test_confidential_memories_derive_no_key_so_a_denial_reveals_nothing(agent, api):
    _stored(agent, sensitivity="confidential")
    assert _post(agent, api, _memory(sensitivity="confidential")).status_code != 422


def test_two_restatements_released_before_either_applies_leave_one_memory(agent):
    first, second = (
        submit(agent.agent, create_payload(_memory(text), [make_evidence(agent.agent)]))
        for text in (STATEMENT, "alice prefers weekly summaries!")
    )
    assert first.status == second.status == Proposal.Status.RELEASED
    assert apply_released(first).outcome == Receipt.Outcome.APPLIED
    assert apply_released(second).outcome == Receipt.Outcome.DEDUPE_CONFLICT
    assert _alice_rows() == 1
    call_command("verify_receipts")


def test_recall_serves_one_of_memories_that_say_the_same(agent, api):
    # Stored before keys were derived (here: under keys the agent chose): both rows exist.
    for key in ("legacy-1", "legacy-2"):
        _stored(agent, "Alice prefers weekly summaries.", dedupe_key=key)
    _stored(agent, "Alice prefers weekly charts")
    body = api.post("/api/v1/recall/search", {"query": "weekly"}, format="json").json()
    statements = [item["memory"]["content"]["statement"] for item in body["results"]]
    assert sorted(statements) == ["Alice prefers weekly charts", "Alice prefers weekly summaries."]


def test_an_event_said_again_at_another_time_is_another_event(agent, api):
    def event(at: str) -> dict:
        content = {"statement": "Alice ran the momentum backtest", "occurred_at": at}
        return user_preference(type="episodic_event", content=content)

    assert _post(agent, api, event("2026-11-02T09:00:00Z")).status_code == 201
    apply_released(Proposal.objects.get())
    assert _post(agent, api, event("2026-11-03T09:00:00Z")).status_code == 201
    refused = _post(agent, api, event("2026-11-02T10:00:00+01:00"))  # the same moment, spelled otherwise
    assert refused.json()["code"] == "duplicate_of_active_memory"
