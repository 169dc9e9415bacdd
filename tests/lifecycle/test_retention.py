"""TTL: the sweep proposes expiry through the pipeline, once, and review guards manual retention."""

from datetime import timedelta

import pytest
from django.utils import timezone

from executor.models import Receipt
from maintenance.retention import propose_retention_expiries
from memory_core.models import Memory
from proposals.models import Proposal
from tests.factories import apply_released


def _past_ttl(memory):
    Memory.objects.filter(pk=memory.pk).update(expires_at=timezone.now() - timedelta(minutes=1))


def test_sweep_expires_past_ttl_memories_through_the_pipeline(remember):
    memory, fresh = remember("temporary note", ttl_seconds=3600), remember("fresh note", ttl_seconds=3600)
    _past_ttl(memory)
    assert propose_retention_expiries() == 1
    proposal = Proposal.objects.get(action="expire", target_id=memory.id)
    assert (proposal.matched_rule, proposal.submitted_by.is_system) == ("auto-system-retention", True)
    assert apply_released(proposal).outcome == Receipt.Outcome.APPLIED
    memory.refresh_from_db()
    fresh.refresh_from_db()
    assert (memory.state, fresh.state) == ("expired", "active")


def test_repeated_sweeps_propose_once(remember):
    memory = remember("temporary note", ttl_seconds=60)
    _past_ttl(memory)
    assert propose_retention_expiries() == 1
    assert propose_retention_expiries() == 0
    assert Proposal.objects.filter(action="expire").count() == 1


def test_manual_review_retention_sends_expiry_to_review(remember):
    memory = remember(
        "keep until a person says so", ttl_seconds=60, retention_policy="manual_review_required"
    )
    _past_ttl(memory)
    propose_retention_expiries()
    proposal = Proposal.objects.get(action="expire", target_id=memory.id)
    assert (proposal.classification, proposal.matched_rule) == ("review_required", "review-manual-retention")


def test_a_ttl_makes_a_memory_time_bound(remember):
    assert remember("ttl note", ttl_seconds=600).retention_policy == "time_bound"


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"ttl_seconds": 60, "retention_policy": "persistent"}, "retention_policy"),
        ({"retention_policy": "time_bound"}, "retention_policy"),
    ],
)
def test_retention_and_ttl_must_agree(api, fields, field):
    from tests.factories import create_payload, user_preference

    response = api.post(
        "/api/v1/proposals/",
        create_payload(user_preference(**fields), []),
        format="json",
        HTTP_IDEMPOTENCY_KEY="ret",
    )
    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert field in response.json()["errors"]
