"""The executor re-checks who allowed each release, whatever the web role wrote.

Rows here are changed behind the workflow's back, as a compromised web role
could: the executor must refuse every release policy and people did not allow.
"""

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from guardian.shortcuts import assign_perm, remove_perm

from executor.models import Receipt
from executor.services import apply_entries
from memory_core.models import Memory
from proposals.models import OutboxEntry, Proposal
from proposals.services import amend_proposal
from reviews.models import ReviewDecision
from reviews.selectors import DECIDE
from tests.factories import (
    apply_released,
    approve,
    create_payload,
    factor_fact,
    make_evidence,
    make_person,
    submit,
    user_preference,
)

UNAUTHORISED = "unauthorised_release"


def _release_behind_the_workflow(proposal: Proposal, **changes) -> Receipt:
    """Mark the proposal released (with ``changes``), queue it as the web role could, and execute it."""
    Proposal.objects.filter(pk=proposal.pk).update(status=Proposal.Status.RELEASED, **changes)
    proposal.refresh_from_db()
    OutboxEntry.objects.create(
        tenant_id=proposal.tenant_id,
        proposal=proposal,
        action_digest=proposal.action_digest,
        available_at=timezone.now(),
    )
    return apply_released(proposal)


def _refused(receipt: Receipt, proposal: Proposal, outcome: str = UNAUTHORISED) -> bool:
    proposal.refresh_from_db()
    return (
        receipt.outcome == outcome
        and receipt.decision_ids == []
        and proposal.status == Proposal.Status.NOT_APPLIED
        and not Memory.objects.filter(pk=proposal.target_id).exists()
    )


@pytest.fixture
def factor(agent):
    """A factor conclusion: review_required, one approval."""
    return submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))


@pytest.fixture
def restricted(agent):
    """A restricted factor conclusion: review_required, two approvals."""
    return submit(
        agent.agent, create_payload(factor_fact(sensitivity="restricted"), [make_evidence(agent.agent)])
    )


def test_a_review_proposal_released_without_any_decision_is_refused(factor):
    assert _refused(_release_behind_the_workflow(factor), factor)


def test_an_approval_written_behind_the_service_does_not_count(agent, factor):
    pm = make_person("pm-behind", agent.tenant)
    ReviewDecision.objects.create(
        tenant_id=factor.tenant_id,
        proposal=factor,
        actor=pm,
        represented_owner="",
        decision="approve",
        reason="ok",
        action_digest=factor.action_digest,
        proposal_version=factor.version,
        policy_fingerprint=factor.policy_fingerprint,
        channel="api",
    )
    assert _refused(_release_behind_the_workflow(factor), factor)


def test_an_approval_by_someone_whose_permission_was_revoked_since_is_refused(agent, factor):
    pm = make_person("pm-revoked", agent.tenant)
    approve(pm, factor)
    remove_perm(DECIDE, pm, agent.tenant)
    assert _refused(apply_released(factor), factor)


def test_an_approval_by_a_deactivated_account_is_refused(agent, factor):
    pm = make_person("pm-left", agent.tenant)
    approve(pm, factor)
    User.objects.filter(pk=pm.pk).update(is_active=False)
    assert _refused(apply_released(factor), factor)


def test_an_approval_by_someone_now_linked_to_the_submitting_agent_is_refused(agent, factor):
    pm = make_person("pm-now-submitter", agent.tenant)
    approve(pm, factor)
    agent.agent.user = pm
    agent.agent.save(update_fields=["user"])
    assert _refused(apply_released(factor), factor)


def test_a_permission_held_through_a_group_counts(agent, factor):
    desk = Group.objects.create(name="desk-pms")
    assign_perm(DECIDE, desk, agent.tenant)
    pm = make_person("pm-by-group")
    pm.groups.add(desk)
    decision = approve(pm, factor)
    receipt = apply_released(factor)
    assert (receipt.outcome, receipt.decision_ids) == ("applied", [str(decision.id)])


def test_a_superuser_who_may_decide_anywhere_counts(agent, factor):
    admin = User.objects.create_superuser("root", password="pw")
    approve(admin, factor)
    assert apply_released(factor).outcome == "applied"


def test_approvals_of_an_amended_action_no_longer_count(agent, restricted):
    pm, pm2 = make_person("pm-a", agent.tenant), make_person("pm-b", agent.tenant)
    approve(pm, restricted)
    from reviews.services import record_decision

    record_decision(
        actor=pm2,
        proposal_id=restricted.pk,
        decision="request_changes",
        reason="name the universe",
        represented_owner="",
        action_digest=restricted.action_digest,
        channel="api",
    )
    amended = factor_fact(sensitivity="restricted", content={"statement": "momentum_12_1 IC unstable"})
    amend_proposal(
        agent=agent.agent, proposal=restricted, payload=create_payload(amended, [make_evidence(agent.agent)])
    )
    assert _refused(_release_behind_the_workflow(restricted), restricted)


def test_lowering_the_required_approvals_is_refused(agent, restricted):
    approve(make_person("pm-one", agent.tenant), restricted)
    assert _refused(_release_behind_the_workflow(restricted, required_approvals=1), restricted)


def test_reclassifying_a_review_proposal_as_automatic_is_refused(factor):
    receipt = _release_behind_the_workflow(
        factor, classification=Proposal.Classification.AUTO_APPLY, required_approvals=0
    )
    assert _refused(receipt, factor)


def test_releasing_a_denied_proposal_is_refused(agent):
    payload = create_payload(user_preference(), [make_evidence(agent.agent)])
    payload["evidence"][0]["content_hash"] = "0" * 64
    denied = submit(agent.agent, payload)
    assert denied.status == Proposal.Status.DENIED
    assert _refused(_release_behind_the_workflow(denied), denied)


def test_rewriting_the_frozen_action_of_an_automatic_proposal_is_refused(agent):
    proposal = submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    assert proposal.classification == Proposal.Classification.AUTO_APPLY
    proposal.fields = {**proposal.fields, "content": {"statement": "Alice wants daily summaries"}}
    digest = proposal.compute_action_digest()
    Proposal.objects.filter(pk=proposal.pk).update(fields=proposal.fields, action_digest=digest)
    OutboxEntry.objects.filter(proposal=proposal).update(action_digest=digest)
    assert _refused(apply_released(proposal), proposal)


def test_a_gated_proposal_escalated_to_review_applies_once_approved(agent, applied_memory):
    event = user_preference(type="episodic_event", content={"statement": "Alice asked for the IC table"})
    event["dedupe_key"] = "event:ic-table"
    first = submit(agent.agent, create_payload(event, [make_evidence(agent.agent)]))
    event["content"] = {"statement": "Alice asked for the IC table again"}
    submit(agent.agent, create_payload(event, [make_evidence(agent.agent)]))
    assert apply_released(first).outcome == "gate_failed"  # the executor sends it to review
    first.refresh_from_db()
    approve(make_person("pm-gate", agent.tenant), first)
    assert apply_released(first).outcome == "applied"


@pytest.mark.postgres
def test_re_checking_approvals_costs_the_same_queries_for_any_batch_size(agent):
    pm = make_person("pm-batch", agent.tenant)
    evidence = [make_evidence(agent.agent)]

    def approved(count: int) -> list:
        proposals = []
        for n in range(count):
            fact = factor_fact(dedupe_key=f"factor:{count}:{n}", content={"statement": f"f{count}-{n}"})
            proposal = submit(agent.agent, create_payload(fact, evidence))
            approve(pm, proposal)
            proposals.append(proposal)
        return list(OutboxEntry.objects.filter(proposal__in=proposals).values_list("id", flat=True))

    small, large = approved(2), approved(8)
    worker = {"host": "test", "pid": 0, "task_id": "t"}
    with CaptureQueriesContext(connection) as few:
        assert apply_entries(entry_ids=small, worker=worker) == 2
    with CaptureQueriesContext(connection) as many:
        assert apply_entries(entry_ids=large, worker=worker) == 8
    assert len(many) == len(few)
    assert Receipt.objects.filter(outcome="applied").count() == 10


def test_seals_made_before_a_key_rotation_still_count(agent, factor, settings):
    decision = approve(make_person("pm-rotation", agent.tenant), factor)
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "rotated-" + settings.SECRET_KEY
    assert apply_released(factor).decision_ids == [str(decision.id)]


def test_seals_made_under_a_retired_key_do_not_count(agent, factor, settings):
    approve(make_person("pm-retired", agent.tenant), factor)
    settings.SECRET_KEY = "rotated-" + settings.SECRET_KEY
    assert _refused(apply_released(factor), factor)
