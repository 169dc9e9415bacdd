"""Invalidated evidence fences what rests on it; a corrected revision brings it back through policy."""

import pytest

from executor.models import Receipt
from proposals.models import OutboxEntry, Proposal
from provenance.services import add_evidence_revision
from reviews.services import record_decision
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


@pytest.fixture
def pm(agent):
    return make_person("pm-fence", agent.tenant)


@pytest.fixture
def backtest(agent):
    return make_evidence(agent.agent, {"factor": "momentum_12_1", "ic_mean": 0.03})


@pytest.fixture
def factor_memory(agent, pm, backtest):
    """A factor conclusion, reviewed and applied, resting on the backtest."""
    proposal = submit(agent.agent, create_payload(factor_fact(), [backtest]))
    approve(pm, proposal)
    apply_released(proposal)
    return proposal.target_id


def _invalidate(agent, revision, allowed=True):
    agent.agent.can_invalidate_evidence = allowed
    agent.agent.save(update_fields=["can_invalidate_evidence"])
    url = f"/api/v1/evidence/{revision.source_id}/revisions/{revision.revision}/invalidate/"
    return agent.client.post(url, {"reason": "look-ahead bias in the backtest"}, format="json")


def _view(api, memory_id):
    return api.get(f"/api/v1/memories/{memory_id}/").json()


def test_agents_need_explicit_permission_to_invalidate(agent, backtest):
    response = _invalidate(agent, backtest, allowed=False)
    backtest.refresh_from_db()
    assert (response.status_code, response.json()["code"]) == (403, "permission_denied")
    assert backtest.status == "valid"


def test_invalidation_fences_memories_and_blocks_open_proposals(agent, api, backtest, factor_memory):
    pending = submit(agent.agent, create_payload(factor_fact(dedupe_key="other"), [backtest]))
    released = submit(agent.agent, create_payload(user_preference(), [backtest]))
    assert _view(api, factor_memory)["return_mode"] == "raw"

    assert _invalidate(agent, backtest).status_code == 200

    view = _view(api, factor_memory)
    assert (view["return_mode"], view["memory"]["state"]) == ("metadata_only", "fenced")
    pending.refresh_from_db()
    released.refresh_from_db()
    assert pending.status == released.status == Proposal.Status.BLOCKED_EVIDENCE
    receipt = apply_released(released)
    assert receipt.outcome == Receipt.Outcome.EVIDENCE_INVALID
    fence = Proposal.objects.get(action="fence", target_id=factor_memory)
    fence_receipt = apply_released(fence)
    assert fence.matched_rule == "auto-system-fence"
    assert fence_receipt.outcome == "applied" and "look-ahead bias" in fence_receipt.effects["fenced"]


def test_corrected_factor_run_goes_back_to_the_pm_and_unfences(agent, api, pm, backtest, factor_memory):
    _invalidate(agent, backtest)
    corrected = add_evidence_revision(source=backtest.source, agent=agent.agent, content={"ic_mean": 0.011})
    revalidation = Proposal.objects.get(action="revalidate", target_id=factor_memory)
    assert (revalidation.classification, revalidation.matched_rule) == (
        "review_required",
        "review-escalation",
    )
    assert revalidation.evidence == [corrected.binding()]
    approve(pm, revalidation)
    receipt = apply_released(revalidation)
    view = _view(api, factor_memory)
    assert receipt.outcome == "applied" and "unfenced" in receipt.effects
    assert (view["return_mode"], view["memory"]["state"], view["memory"]["revision"]) == ("raw", "active", 2)
    assert view["memory"]["evidence"] == [{**corrected.binding(), "status": "valid"}]


def test_rejected_revalidation_leaves_the_memory_fenced(agent, api, pm, backtest, factor_memory):
    _invalidate(agent, backtest)
    add_evidence_revision(source=backtest.source, agent=agent.agent, content={"ic_mean": -0.02})
    revalidation = Proposal.objects.get(action="revalidate", target_id=factor_memory)
    record_decision(
        actor=pm,
        proposal_id=revalidation.pk,
        decision="reject",
        reason="the corrected run disagrees",
        represented_owner="",
        action_digest=revalidation.action_digest,
        channel="api",
    )
    assert _view(api, factor_memory)["memory"]["state"] == "fenced"
    assert not OutboxEntry.objects.filter(proposal=revalidation).exists()


def test_an_agent_correcting_evidence_cannot_lift_a_fence_without_review(agent, api, pm, backtest):
    """The agent that uploads the "corrected" run is not who decides that it corrects anything."""
    proposal = submit(agent.agent, create_payload(user_preference(), [backtest]))
    apply_released(proposal)
    _invalidate(agent, backtest)
    add_evidence_revision(source=backtest.source, agent=agent.agent, content={"fixed": True})
    revalidation = Proposal.objects.get(action="revalidate", target_id=proposal.target_id)
    assert (revalidation.status, revalidation.matched_rule) == ("pending_review", "review-escalation")
    assert not OutboxEntry.objects.filter(proposal=revalidation).exists()
    approve(pm, revalidation)
    apply_released(revalidation)
    assert _view(api, proposal.target_id)["return_mode"] == "raw"


def test_agents_cannot_submit_system_actions(api, factor_memory):
    body = {"action": "fence", "memory_id": str(factor_memory), "base_revision": 1, "reason": "x"}
    response = api.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY="f")
    assert (response.status_code, response.json()["code"]) == (400, "validation_error")


def test_people_invalidate_from_the_admin_with_the_permission(admin_client, api, backtest, factor_memory):
    response = admin_client.post(
        "/admin/evidence/evidencerevision/",
        {"action": "invalidate", "_selected_action": [backtest.pk]},
        follow=True,
    )
    backtest.refresh_from_db()
    assert "Invalidated 1 revision" in response.content.decode()
    assert backtest.status == "invalidated" and "invalidated by admin" in backtest.status_reason
    assert _view(api, factor_memory)["memory"]["state"] == "fenced"
