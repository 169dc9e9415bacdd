"""One active memory per dedupe key: refused at submission, at execution, and by the database."""

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.utils import timezone

from executor.models import Receipt
from executor.services import apply_entries
from memory_core.models import Memory
from proposals.models import OutboxEntry, Proposal
from tests.factories import (
    apply_released,
    approve,
    create_payload,
    factor_fact,
    make_evidence,
    make_person,
    owner_context,
    submit,
    user_preference,
)

KEY = "pref:pm-alice:summary_cadence"
WORKER = {"host": "test-host", "pid": 1, "task_id": "dedupe"}


def _create(agent, statement="Alice prefers weekly summaries"):
    memory = user_preference(dedupe_key=KEY, content={"statement": statement, "preference_key": "cadence"})
    return submit(agent.agent, create_payload(memory, [make_evidence(agent.agent)]))


def _verb(agent, memory, verb):
    payload = {
        "action": verb,
        "memory_id": str(memory.pk),
        "base_revision": memory.revision,
        "reason": f"{verb} for the test",
        "policy_context": owner_context(),
    }
    return submit(agent.agent, payload)


def _active_on_key():
    return list(Memory.objects.filter(dedupe_key=KEY, state="active").values_list("pk", flat=True))


def test_two_identical_creates_released_before_either_applies_leave_one_active_memory(agent):
    first, second = _create(agent), _create(agent)  # 2 s apart in the black-box run: neither applied yet
    assert first.status == second.status == Proposal.Status.RELEASED
    assert apply_released(first).outcome == Receipt.Outcome.APPLIED
    refused = apply_released(second)
    second.refresh_from_db()
    assert refused.outcome == Receipt.Outcome.DEDUPE_CONFLICT
    assert str(first.target_id) in refused.reason
    assert (second.status, second.outcome) == (Proposal.Status.NOT_APPLIED, "dedupe_conflict")
    assert _active_on_key() == [first.target_id]
    call_command("verify_receipts")


def test_in_one_batch_the_second_claim_on_a_key_is_verified_after_the_first_commits(agent):
    proposals = [_create(agent), _create(agent, "Alice prefers daily summaries")]
    ids = list(OutboxEntry.objects.filter(proposal__in=proposals).values_list("pk", flat=True))
    assert apply_entries(entry_ids=ids, worker=WORKER) == 2
    outcomes = dict(Receipt.objects.values_list("proposal_id", "outcome"))
    assert sorted(outcomes.values()) == ["applied", "dedupe_conflict"]
    assert len(_active_on_key()) == 1


def test_a_contradiction_is_denied_and_names_the_memory_to_update(agent, api):
    held = _create(agent)
    apply_released(held)
    memory = user_preference(dedupe_key=KEY, content={"statement": "Alice prefers daily summaries"})
    payload = create_payload(memory, [make_evidence(agent.agent)])
    response = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="contradict")
    body = response.json()
    assert response.status_code == 422, body
    assert body["code"] == "contradicts_active_memory"
    assert body["held_by"] == [{"memory_id": str(held.target_id), "revision": 1}]
    update = {
        "action": "update",
        "memory_id": body["held_by"][0]["memory_id"],
        "base_revision": 1,
        "changes": {"content": {"statement": "Alice prefers daily summaries", "preference_key": "cadence"}},
        "evidence": [make_evidence(agent.agent).binding()],
        "policy_context": owner_context(),
    }
    response = api.post("/api/v1/proposals/", update, format="json", HTTP_IDEMPOTENCY_KEY="update")
    assert response.status_code == 201, response.json()


def test_restoring_a_memory_whose_key_is_now_held_is_denied(agent):
    old = _create(agent)
    apply_released(old)
    expiry = _verb(agent, Memory.objects.get(pk=old.target_id), "expire")
    assert apply_released(expiry).outcome == "applied"
    apply_released(_create(agent, "Alice prefers daily summaries"))
    restore = _verb(agent, Memory.objects.get(pk=old.target_id), "restore")
    assert (restore.status, restore.matched_rule) == (Proposal.Status.DENIED, "deny-contradiction")


def test_a_restore_approved_before_the_key_was_taken_is_refused_at_execution(agent):
    old = _create(agent)
    apply_released(old)
    apply_released(_verb(agent, Memory.objects.get(pk=old.target_id), "expire"))
    restore = _verb(agent, Memory.objects.get(pk=old.target_id), "restore")
    newer = _create(agent, "Alice prefers daily summaries")  # the key is free: nothing active holds it
    approve(make_person("pm-1", agent.tenant), restore)
    assert apply_released(newer).outcome == "applied"
    assert apply_released(restore).outcome == Receipt.Outcome.DEDUPE_CONFLICT
    assert Memory.objects.get(pk=old.target_id).state == "expired"


def test_the_database_refuses_a_second_active_memory_on_a_key(agent):
    now = timezone.now()
    fields = {
        "tenant": agent.tenant,
        "subject_kind": "user",
        "subject_id": "pm-alice",
        "scope": "user",
        "type": "preference",
        "content": {"statement": "x"},
        "dedupe_key": KEY,
        "created_at": now,
        "updated_at": now,
    }
    Memory.objects.create(**fields)
    Memory.objects.create(**fields | {"state": "expired"})  # inactive rows may share the key
    Memory.objects.create(**fields | {"dedupe_key": ""})  # and so may memories without one
    Memory.objects.create(**fields | {"dedupe_key": ""})
    with pytest.raises(IntegrityError), transaction.atomic():
        Memory.objects.create(**fields)


def test_reviewer_sees_the_active_memory_and_the_pending_proposal_a_proposal_conflicts_with(client, agent):
    pm = make_person("pm-1", agent.tenant)
    first = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    stable = factor_fact(content={"statement": "momentum is stable"})
    second = submit(agent.agent, create_payload(stable, [make_evidence(agent.agent)]))
    client.force_login(pm)
    html = client.get(f"/review/proposals/{second.pk}/").content.decode()
    assert "This conflicts with pending proposal" in html and str(first.pk) in html
    assert "momentum_12_1 shows unstable IC" in html  # what the other one says, side by side
    approve(pm, first)
    assert apply_released(first).outcome == "applied"
    html = client.get(f"/review/proposals/{second.pk}/").content.decode()
    assert "This conflicts with active memory" in html and str(first.target_id) in html
    approve(pm, second)
    assert apply_released(second).outcome == Receipt.Outcome.DEDUPE_CONFLICT
    unrelated = submit(
        agent.agent, create_payload(factor_fact(dedupe_key="other"), [make_evidence(agent.agent)])
    )
    assert 'id="conflicts"' not in client.get(f"/review/proposals/{unrelated.pk}/").content.decode()
