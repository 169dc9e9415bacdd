"""Dormancy: the system sweep proposes it, the executor applies it, recall hides it, restore undoes it."""

import math
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from maintenance.dormancy import dormant_candidates, level_at, propose_dormancy
from memory_core.models import Memory, MemoryReads
from proposals.models import Proposal
from proposals.policy import load_rule_set
from tests.factories import apply_released, approve, make_person, submit

DEFAULT = {"decay": 0.5, "importance": 0.0, "dormancy": {"threshold": -2.0, "days": 30}}


def _last_applied(memory, days_ago: int) -> None:
    """Age the memory as if its last revision was applied ``days_ago`` days ago."""
    Memory.objects.filter(pk=memory.pk).update(updated_at=timezone.now() - timedelta(days=days_ago))


def _read(memory, days_ago: int, reads: int = 1) -> None:
    day = (timezone.now() - timedelta(days=days_ago)).date()
    MemoryReads.objects.create(tenant_id=memory.tenant_id, memory_id=memory.id, day=day, reads=reads)


def _search(api, query, **body):
    response = api.post("/api/v1/recall/search", {"query": query, **body}, format="json")
    assert response.status_code == 200, response.content
    return {item["memory"]["memory_id"] for item in response.json()["results"]}


def _candidates(agent):
    return {
        m.id
        for m in dormant_candidates(
            tenant_id=agent.tenant.id,
            memory_type="preference",
            parameters=DEFAULT,
            now=timezone.now(),
            scan=100,
        )
    }


def test_threshold_maths_counts_a_never_read_memory_from_its_last_apply():
    now = timezone.now()
    cutoff = now - timedelta(days=30)
    # Applied 100 days ago, never read: at the cutoff it is 70 days old, ln(70^-0.5) = -2.12 < -2.
    old = level_at([((now - timedelta(days=100)).date(), 1)], at=cutoff, parameters=DEFAULT)
    assert old == pytest.approx(math.log(70**-0.5), abs=0.02) and old < -2
    # Applied 60 days ago: 30 days old at the cutoff, ln(30^-0.5) = -1.70, still above the threshold.
    assert level_at([((now - timedelta(days=60)).date(), 1)], at=cutoff, parameters=DEFAULT) > -2
    # Importance lifts the level by a constant.
    lifted = {**DEFAULT, "importance": 1.0}
    assert level_at([((now - timedelta(days=100)).date(), 1)], at=cutoff, parameters=lifted) == pytest.approx(
        old + 1
    )


def test_only_memories_below_the_threshold_for_the_whole_window_are_candidates(agent, remember):
    stale, recent, read_lately, read_often = (remember(f"note {n}") for n in range(4))
    _last_applied(stale, 100)
    _last_applied(recent, 60)
    _last_applied(read_lately, 100)
    _read(read_lately, 10)  # a read inside the window: not below the threshold for the whole window
    _last_applied(read_often, 100)
    _read(read_often, 40, reads=50)  # strong before the cutoff
    assert _candidates(agent) == {stale.id}


def test_sweep_makes_a_memory_dormant_and_restore_brings_it_back_over_http(agent, api, remember):
    marker = "zqdormantcadence"
    memory, kept = remember(f"{marker} weekly"), remember(f"{marker} daily")
    _last_applied(memory, 100)
    assert propose_dormancy() == 1
    proposal = Proposal.objects.get(action="dormant", target_id=memory.id)
    assert (proposal.matched_rule, proposal.submitted_by.is_system) == ("auto-system-dormancy", True)
    assert proposal.submitted_by.tenant_id == memory.tenant_id
    receipt = apply_released(proposal)
    assert receipt.outcome == "applied"
    memory.refresh_from_db()
    assert memory.state == "dormant"

    assert _search(api, marker) == {str(kept.id)}
    assert _search(api, marker, include_inactive=True) == {str(kept.id), str(memory.id)}
    assert _search(api, marker, filters={"states": ["dormant"]}) == {str(memory.id)}
    got = api.get(f"/api/v1/memories/{memory.id}/")
    assert got.status_code == 200 and got.json()["memory"]["state"] == "dormant"

    body = {
        "action": "restore",
        "memory_id": str(memory.id),
        "base_revision": memory.revision,
        "reason": "needed",
    }
    response = api.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY="wake")
    assert response.status_code in (200, 201, 202), response.content
    restore = Proposal.objects.get(pk=response.json()["id"])
    assert restore.matched_rule == "review-lifecycle"
    approve(make_person("waker", agent.tenant), restore)
    assert apply_released(restore).outcome == "applied"
    memory.refresh_from_db()
    assert memory.state == "active"
    assert _search(api, marker) == {str(kept.id), str(memory.id)}


def test_repeated_sweeps_propose_once(remember):
    memory = remember("quiet note")
    _last_applied(memory, 100)
    assert propose_dormancy() == 1
    assert propose_dormancy() == 0
    assert Proposal.objects.filter(action="dormant").count() == 1


def test_a_dormant_memory_gives_up_its_dedupe_key(agent, remember):
    sleeper = remember("tea, not coffee", dedupe_key="drink")
    _last_applied(sleeper, 100)
    propose_dormancy()
    assert apply_released(Proposal.objects.get(action="dormant")).outcome == "applied"
    successor = remember("coffee, not tea", dedupe_key="drink")
    assert successor.state == "active"
    sleeper.refresh_from_db()
    restore = submit(
        agent.agent,
        {"action": "restore", "memory_id": str(sleeper.id), "base_revision": sleeper.revision, "reason": "x"},
    )
    assert (restore.status, restore.matched_rule) == (Proposal.Status.DENIED, "deny-contradiction")


# --- attackers ---------------------------------------------------------------


def test_an_agent_cannot_propose_dormancy_over_http(api, applied_memory):
    body = {"action": "dormant", "memory_id": str(applied_memory.id), "base_revision": 1, "reason": "hide it"}
    response = api.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY="sneak")
    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    applied_memory.refresh_from_db()
    assert applied_memory.state == "active"


def test_an_agent_that_reaches_the_service_is_denied_by_policy(agent, applied_memory):
    proposal = submit(
        agent.agent,
        {"action": "dormant", "memory_id": str(applied_memory.id), "base_revision": 1, "reason": "hide it"},
    )
    assert (proposal.status, proposal.matched_rule) == (Proposal.Status.DENIED, "deny-agent-dormancy")


def test_another_tenants_agent_cannot_make_my_memory_dormant(other_agent, applied_memory):
    proposal = submit(
        other_agent.agent,
        {"action": "dormant", "memory_id": str(applied_memory.id), "base_revision": 1, "reason": "hide it"},
    )
    assert proposal.status == Proposal.Status.DENIED
    applied_memory.refresh_from_db()
    assert applied_memory.state == "active"


def test_candidate_selection_costs_the_same_queries_for_one_or_many(
    agent, remember, django_assert_max_num_queries
):
    for n in range(5):
        _last_applied(remember(f"old note {n}"), 100)
    with django_assert_max_num_queries(2):
        assert len(_candidates(agent)) == 5


def test_the_mgp_profile_auto_applies_dormancy_too(settings, remember):
    memory = remember("quiet note")
    settings.CUSTODIAN_POLICY_FILE = Path(settings.BASE_DIR) / "mgp" / "profile" / "rules.yaml"
    _last_applied(memory, 100)
    assert propose_dormancy() == 1
    proposal = Proposal.objects.get(action="dormant")
    assert proposal.matched_rule == "auto-system-dormancy"
    assert proposal.policy_version == load_rule_set(settings.CUSTODIAN_POLICY_FILE).version


def test_memories_that_stay_above_the_threshold_never_starve_the_ones_behind_them(remember):
    busy = [remember(f"busy note {n}") for n in range(2)]
    quiet = remember("quiet note")
    for age, memory in zip((300, 299, 100), [*busy, quiet], strict=True):
        _last_applied(memory, age)
    for memory in busy:
        _read(memory, 40, reads=50)  # strong before the window, so never below the threshold
    assert propose_dormancy(scan=2) == 0  # read the two busy ones, stopped after them
    assert propose_dormancy(scan=2) == 1  # resumed behind them
    assert Proposal.objects.get(action="dormant").target_id == quiet.id
    assert propose_dormancy(scan=2) == 0  # wrapped around: the busy ones again, nothing new
