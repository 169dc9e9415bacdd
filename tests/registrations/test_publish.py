"""Publishing a registration: draft → validate → a reviewed proposal → the executor, with a receipt."""

import json
import uuid

import pytest
from django.core.management import CommandError
from django.db import connection
from guardian.shortcuts import assign_perm

from executor.models import Receipt
from maintenance.schema_evolution import request_publication, validate_candidate
from memory_core.models import AccessEvent
from proposals.models import Proposal
from registrations.models import Registration
from registrations.selectors import active_registration
from registrations.services import draft_registration, edit_draft
from tests.factories import (
    apply_released,
    approve,
    create_payload,
    factor_fact,
    make_agent,
    make_evidence,
    make_person,
    submit,
)
from tests.registrations.conftest import PUBLISH, command, with_sector
from tests.reviews.test_review_api import _decide, person_client


def _requested(agent, operator, document=None) -> tuple[Registration, Proposal]:
    candidate = draft_registration(
        tenant_id=agent.tenant.pk, document=document or with_sector(), created_by="operator"
    )
    validate_candidate(candidate=candidate)
    proposal = request_publication(
        tenant=agent.tenant, candidate_id=candidate.pk, requested_by=operator, reason="add sector"
    )
    return candidate, proposal


def _bypassing_triggers(write) -> None:
    if connection.vendor != "postgresql":
        write()
        return
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        write()
        cursor.execute("SET LOCAL session_replication_role = origin")


def _fact_with_sector(agent, key: str):
    fact = factor_fact(content={**factor_fact()["content"], "sector": "banks"})
    return agent.client.post(
        "/api/v1/proposals/",
        create_payload(fact, [make_evidence(agent.agent)]),
        format="json",
        HTTP_IDEMPOTENCY_KEY=key,
    )


def test_a_new_optional_property_is_refused_until_its_registration_is_published(agent, operator, publisher):
    refused = _fact_with_sector(agent, "before")
    assert (refused.status_code, refused.json()["code"]) == (422, "content_invalid")
    assert refused.json()["errors"][0]["path"] == "/content/sector"

    candidate, proposal = _requested(agent, operator)
    assert proposal.status == Proposal.Status.PENDING_REVIEW  # never automatic
    assert active_registration(tenant_id=agent.tenant.pk).version == 1  # a candidate is inert
    assert _decide(person_client(publisher), proposal).status_code == 201
    receipt = apply_released(proposal)

    assert receipt.outcome == Receipt.Outcome.APPLIED
    assert receipt.effects["registration"] == {
        "published_version": 2,
        "fingerprint": candidate.fingerprint,
        "superseded_version": 1,
    }
    candidate.refresh_from_db()
    assert (candidate.status, candidate.version, candidate.receipt_id) == ("active", 2, receipt.id)
    accepted = _fact_with_sector(agent, "after")
    assert accepted.status_code == 201, accepted.content
    assert accepted.json()["registration_version"] == 2


def test_proposals_access_events_and_receipts_record_the_registration_version(
    agent, api, operator, publisher
):
    first = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    _, publish = _requested(agent, operator)
    approve(publisher, publish)
    apply_released(publish)
    second = submit(
        agent.agent, create_payload(factor_fact(dedupe_key="factor:x"), [make_evidence(agent.agent)])
    )
    approve(publisher, second)
    api.post("/api/v1/recall/search", {"query": "momentum"}, format="json")

    assert (first.registration_version, second.registration_version) == (1, 2)
    assert apply_released(second).registration_version == 2
    assert AccessEvent.objects.get(tenant=agent.tenant).registration_version == 2


def test_the_commands_draft_validate_and_request(agent, operator, tmp_path):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(with_sector()))
    out = command("draft", "--tenant", agent.tenant.name, "--by", "operator", "--file", str(path))
    candidate_id = out.split()[1]
    report = json.loads(command("validate", "--tenant", agent.tenant.name, "--candidate", candidate_id))
    assert report["changes"] == [] and report["failures"] == 0
    out = command(
        "publish-request", "--tenant", agent.tenant.name, "--candidate", candidate_id, "--by", "operator"
    )
    assert "pending_review" in out
    assert Registration.objects.get(pk=candidate_id).status == Registration.Status.REQUESTED


def test_validation_counts_active_memories_and_reports_the_first_failures(agent, operator, remember):
    remember("Alice prefers weekly summaries")
    remember("Alice prefers terse answers")
    candidate = draft_registration(tenant_id=agent.tenant.pk, document=with_sector(), created_by="operator")
    report = validate_candidate(candidate=candidate)
    assert (report["checked"]["preference"], report["failures"], report["first_failures"]) == (2, 0, [])
    # A memory the candidate would refuse (here: a tighter bound, which is also not additive).
    document = with_sector()
    document["types"]["preference"]["schema"]["properties"]["statement"]["maxLength"] = 10
    edit_draft(candidate=candidate, document=document)
    report = validate_candidate(candidate=candidate)
    assert report["failures"] == 2 and len(report["first_failures"]) == 2
    assert report["first_failures"][0]["problems"][0]["path"] == "/content/statement"
    assert {"path": "/types/preference/schema/properties/statement/maxLength", "kind": "bound_tightened"} in [
        {"path": c["path"], "kind": c["kind"]} for c in report["changes"]
    ]
    candidate.refresh_from_db()
    assert candidate.status == Registration.Status.DRAFT
    with pytest.raises(Exception) as refusal:
        request_publication(tenant=agent.tenant, candidate_id=candidate.pk, requested_by=operator, reason="")
    assert refusal.value.code == "registration_not_validated"


# --- attackers ------------------------------------------------------------------------------


def test_another_tenants_operator_cannot_ask_to_publish(agent, other_agent, operator):
    candidate = draft_registration(tenant_id=agent.tenant.pk, document=with_sector(), created_by="operator")
    validate_candidate(candidate=candidate)
    foreign = make_person("foreign-operator", other_agent.tenant)
    assign_perm(PUBLISH, foreign, other_agent.tenant)
    with pytest.raises(Exception) as refusal:
        request_publication(tenant=agent.tenant, candidate_id=candidate.pk, requested_by=foreign, reason="")
    assert refusal.value.code == "publish_not_permitted"
    # Naming their own tenant with this tenant's candidate finds nothing.
    with pytest.raises(Exception) as missing:
        request_publication(
            tenant=other_agent.tenant, candidate_id=candidate.pk, requested_by=foreign, reason=""
        )
    assert missing.value.code == "registration_not_validated"
    with pytest.raises(CommandError, match="no such candidate"):
        command("validate", "--tenant", other_agent.tenant.name, "--candidate", str(candidate.pk))


def test_an_agent_cannot_publish(agent, api, operator):
    candidate = draft_registration(tenant_id=agent.tenant.pk, document=with_sector(), created_by="operator")
    body = {"action": "register", "registration_id": str(candidate.pk), "reason": "let me"}
    response = api.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY="register")
    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    # Even a register proposal built past the API is denied by policy for an agent.
    payload = {"action": "register", "registration_id": str(candidate.pk), "requested_by": 0, "reason": "x"}
    proposal = submit(agent.agent, payload)
    assert (proposal.status, proposal.matched_rule) == ("denied", "deny-agent-registration")
    assert active_registration(tenant_id=agent.tenant.pk).version == 1


def test_a_reviewer_without_the_publish_permission_cannot_approve(agent, operator):
    _, proposal = _requested(agent, operator)
    pm = make_person("pm-only-decides", agent.tenant)
    response = _decide(person_client(pm), proposal)
    assert (response.status_code, response.json()["code"]) == (403, "publish_not_permitted")


def test_the_operator_who_asked_cannot_approve(agent, operator):
    _, proposal = _requested(agent, operator)
    response = _decide(person_client(operator), proposal)
    assert (response.status_code, response.json()["code"]) == (403, "self_approval")


def test_a_publisher_who_lost_the_permission_before_execution_publishes_nothing(agent, operator, publisher):
    from guardian.shortcuts import remove_perm

    _, proposal = _requested(agent, operator)
    approve(publisher, proposal)
    remove_perm(PUBLISH, publisher, agent.tenant)
    receipt = apply_released(proposal)
    assert receipt.outcome == Receipt.Outcome.UNAUTHORISED_RELEASE
    assert active_registration(tenant_id=agent.tenant.pk).version == 1


def test_a_candidate_changed_after_review_is_not_published(agent, operator, publisher):
    candidate, proposal = _requested(agent, operator)
    approve(publisher, proposal)
    # The row is rewritten behind the services' back: PostgreSQL's trigger refuses that to every
    # role (tests/registrations/test_database_guards.py), so here a superuser bypasses triggers.
    document = with_sector()
    document["types"]["semantic_fact"]["schema"]["properties"]["sector"]["maxLength"] = 5
    _bypassing_triggers(lambda: Registration.objects.filter(pk=candidate.pk).update(document=document))
    receipt = apply_released(proposal)
    assert (receipt.outcome, receipt.reason) == (
        Receipt.Outcome.DIGEST_MISMATCH,
        "the registration candidate changed after it was reviewed",
    )
    assert active_registration(tenant_id=agent.tenant.pk).version == 1


def test_a_requested_candidate_can_no_longer_be_edited(agent, operator):
    candidate, _ = _requested(agent, operator)
    with pytest.raises(Exception) as refusal:
        edit_draft(candidate=candidate, document=with_sector())
    assert refusal.value.code == "registration_not_editable"


def test_a_candidate_on_an_outdated_version_is_stale(agent, operator, publisher):
    _, first = _requested(agent, operator)
    second_candidate = draft_registration(tenant_id=agent.tenant.pk, document=with_sector(), created_by="op")
    validate_candidate(candidate=second_candidate)
    second = request_publication(
        tenant=agent.tenant, candidate_id=second_candidate.pk, requested_by=operator, reason=""
    )
    approve(publisher, first)
    approve(publisher, second)
    assert apply_released(first).outcome == Receipt.Outcome.APPLIED
    stale = apply_released(second)
    assert (stale.outcome, stale.reason) == (Receipt.Outcome.STALE, "candidate extends v1, active is v2")
    second_candidate.refresh_from_db()
    assert second_candidate.status == Registration.Status.DRAFT  # its operator may redraft it on v2


def test_content_that_no_longer_validates_at_execution_is_refused_with_a_receipt(agent, publisher):
    proposal = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    # The active registration changes in between (written directly: publishing would refuse it).
    tightened = with_sector()
    tightened["types"]["semantic_fact"]["schema"]["properties"]["factor"]["maxLength"] = 3
    Registration.objects.create(
        tenant=agent.tenant,
        status=Registration.Status.ACTIVE,
        version=2,
        base_version=1,
        document=tightened,
        fingerprint=uuid.uuid4().hex,
        created_by="test",
    )
    from registrations.selectors import forget_active

    forget_active(agent.tenant.pk)
    approve(publisher, proposal)
    receipt = apply_released(proposal)
    assert receipt.outcome == Receipt.Outcome.CONTENT_INVALID
    assert "/content/factor (maxLength)" in receipt.reason and "submitted under v1" in receipt.reason
    assert receipt.registration_version == 2


def test_another_tenant_keeps_its_own_registration(agent, other_agent, operator, publisher):
    _, proposal = _requested(agent, operator)
    approve(publisher, proposal)
    apply_released(proposal)
    assert active_registration(tenant_id=other_agent.tenant.pk).version == 1
    outsider = make_agent("third-desk", "third-agent")
    response = _fact_with_sector(outsider, "other")
    assert (response.status_code, response.json()["code"]) == (422, "content_invalid")


def test_labels_come_from_the_active_registration(agent, operator, publisher):
    from memory_core.labels import tenant_field_label

    assert tenant_field_label("content.sector", tenant_id=agent.tenant.pk) == "Sector"  # words, unregistered
    document = with_sector()
    document["types"]["semantic_fact"]["labels"]["sector"] = "GICS sector"
    _, proposal = _requested(agent, operator, document)
    approve(publisher, proposal)
    apply_released(proposal)
    label = tenant_field_label("content.sector", tenant_id=agent.tenant.pk, memory_type="semantic_fact")
    assert label == "GICS sector"


def test_a_rejected_publish_gives_the_candidate_back_as_a_draft(agent, operator, publisher):
    candidate, proposal = _requested(agent, operator)
    response = _decide(person_client(publisher), proposal, decision="reject")
    assert response.status_code == 201
    candidate.refresh_from_db()
    assert candidate.status == Registration.Status.DRAFT
    edit_draft(candidate=candidate, document=with_sector())  # editable again; must validate again
    with pytest.raises(Exception) as refusal:
        request_publication(tenant=agent.tenant, candidate_id=candidate.pk, requested_by=operator, reason="")
    assert refusal.value.code == "registration_not_validated"
    validate_candidate(candidate=candidate)
    again = request_publication(
        tenant=agent.tenant, candidate_id=candidate.pk, requested_by=operator, reason=""
    )
    assert again.pk != proposal.pk and again.status == Proposal.Status.PENDING_REVIEW
