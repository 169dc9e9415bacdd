"""Policy judges the transition, not the after-state: attacks that used to walk around review."""

import textwrap

import pytest

from memory_core.models import Memory
from proposals.models import Proposal
from proposals.policy import PolicyError, classify, load_rule_set
from provenance.services import invalidate_evidence_revision
from tests.factories import create_payload, factor_fact, make_evidence, owner_context, user_preference


def _update(api, memory: Memory, changes: dict, evidence=()) -> dict:
    body = {
        "evidence": [revision.binding() for revision in evidence],
        "action": "update",
        "memory_id": str(memory.pk),
        "base_revision": memory.revision,
        "changes": changes,
        "policy_context": owner_context(),
    }
    key = f"u-{memory.pk}-{len(changes)}-{sorted(changes)[0]}"
    response = api.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == 201, response.content
    return response.json()


@pytest.mark.parametrize("memory_type", ["preference", "episodic_event"])
def test_making_a_restricted_memory_public_needs_two_approvals(api, remember, memory_type):
    memory = remember("Alice's salary band is L7", type=memory_type, sensitivity="restricted")
    body = _update(api, memory, {"sensitivity": "public"})
    assert (body["classification"], body["required_approvals"]) == ("review_required", 2)
    assert body["status"] == "pending_review"


@pytest.mark.parametrize(
    ("fields", "changes", "escalation"),
    [
        ({"sensitivity": "confidential"}, {"sensitivity": "internal"}, "lowers_sensitivity"),
        (
            {"retention_policy": "manual_review_required"},
            {"retention_policy": "persistent"},
            "relaxes_retention",
        ),
    ],
)
def test_loosening_an_owner_preference_goes_to_review(api, remember, fields, changes, escalation):
    memory = remember("Alice prefers weekly summaries", **fields)
    body = _update(api, memory, changes)
    proposal = Proposal.objects.get(pk=body["id"])
    assert (proposal.classification, proposal.matched_rule) == ("review_required", "review-escalation")
    assert proposal.policy_facts["escalation"] == escalation


def test_an_owner_preference_change_that_escalates_nothing_still_auto_applies(agent, api, remember):
    memory = remember("Alice prefers weekly summaries")
    changes = {"content": {"statement": "Alice prefers daily summaries"}}
    body = _update(api, memory, changes, evidence=[make_evidence(agent.agent)])
    assert body["classification"] == "auto_apply"


def test_updating_a_fenced_memory_lifts_the_fence_only_with_review(agent, api, remember):
    evidence = make_evidence(agent.agent)
    memory = remember("Backtest 7 finished cleanly", type="episodic_event")
    invalidate_evidence_revision(revision=memory.evidence_links.get().evidence_revision, reason="bad data")
    memory.refresh_from_db()
    body = {
        "action": "update",
        "memory_id": str(memory.pk),
        "base_revision": memory.revision,
        "changes": {"content": {"statement": "Backtest 7 finished cleanly (rerun)"}},
        "evidence": [evidence.binding()],
        "policy_context": owner_context(),
    }
    response = api.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY="unfence")
    assert response.status_code == 201, response.content
    proposal = Proposal.objects.get(pk=response.json()["id"])
    assert proposal.classification == "review_required"
    assert proposal.policy_facts["escalation"] == "unfences"


def test_a_factor_conclusion_cannot_travel_as_an_episodic_event(api, agent):
    fact = factor_fact(type="episodic_event")
    payload = create_payload(fact, [make_evidence(agent.agent)])
    response = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="smuggle")
    assert (response.status_code, response.json()["code"]) == (422, "content_invalid")
    assert "/content/factor" in str(response.json()["errors"])
    assert not Proposal.objects.exists()


@pytest.mark.parametrize("memory_type", Memory.Type.values)
def test_every_memory_type_has_a_closed_content_schema(api, agent, memory_type):
    memory = user_preference(type=memory_type, content={"statement": "x", "smuggled": 1})
    payload = create_payload(memory, [make_evidence(agent.agent)])
    response = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY=memory_type)
    assert (response.status_code, response.json()["code"]) == (422, "content_invalid")
    assert "/content/smuggled" in str(response.json()["errors"])


def test_episodic_events_shared_with_the_org_need_a_person(api, agent):
    event = {
        "subject": {"kind": "org", "id": "quant-desk"},
        "scope": "org",
        "type": "episodic_event",
        "content": {"statement": "momentum_12_1 IC collapsed after neutralisation"},
    }
    payload = create_payload(event, [make_evidence(agent.agent)], {"acting_for_subject": event["subject"]})
    response = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="org-event")
    assert response.json()["classification"] == "review_required"


def _rule_file(tmp_path, rules: str):
    path = tmp_path / "rules.yaml"
    path.write_text(textwrap.dedent(rules))
    return path


def test_no_rule_file_can_auto_apply_an_escalating_change(tmp_path):
    rule_set = load_rule_set(
        _rule_file(
            tmp_path,
            """
            version: "hostile"
            rules:
              - {id: auto-everything, when: {action: [update]}, verdict: auto_apply, reasons: [yes]}
              - {id: review-rest, when: {}, verdict: review_required, reasons: [rest]}
            """,
        )
    )
    quiet = {"action": "update", "escalation": "none"}
    assert classify(rule_set, quiet).classification == "auto_apply"
    for kind in ("moves_memory", "lowers_sensitivity", "relaxes_retention", "unfences"):
        verdict = classify(rule_set, {**quiet, "escalation": kind})
        assert (verdict.classification, verdict.rule.id) == ("review_required", "review-rest")


def test_a_rule_file_must_end_in_review_or_denial(tmp_path):
    path = _rule_file(
        tmp_path,
        """
        version: "hostile"
        rules:
          - {id: auto-everything, when: {}, verdict: auto_apply, reasons: [yes]}
        """,
    )
    with pytest.raises(PolicyError, match="last rule must review or deny"):
        load_rule_set(path)


def test_the_system_expires_only_memories_whose_ttl_passed(agent, remember):
    from proposals.services import submit_proposal
    from tenancy.services import system_agent

    memory = remember("Alice prefers weekly summaries", sensitivity="restricted")
    proposal = submit_proposal(
        agent=system_agent(tenant_id=agent.tenant.pk),
        idempotency_key="forged-retention",
        payload={"action": "expire", "memory_id": memory.pk, "base_revision": memory.revision, "reason": "x"},
        request_hash="h",
    ).proposal
    assert (proposal.classification, proposal.required_approvals) == ("review_required", 2)
