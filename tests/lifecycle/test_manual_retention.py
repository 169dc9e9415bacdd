"""manual_review_required: no sweep, Dreaming run or rule file retires such a memory without a person."""

import textwrap
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from maintenance.compaction import propose_compactions
from maintenance.dreaming.runs import dreaming_pass
from memory_core.models import Memory
from proposals.models import DreamingRun, Proposal
from tests.dreaming.conftest import dream_reviewers, dreaming_mode  # noqa: F401
from tests.factories import apply_released, approve, make_person
from tests.maintenance.test_compaction import capacity  # noqa: F401

MANUAL = "manual_review_required"
MGP_PROFILE = Path(__file__).resolve().parents[2] / "mgp" / "profile" / "rules.yaml"


def _last_applied(memory, days_ago: int) -> None:
    Memory.objects.filter(pk=memory.pk).update(updated_at=timezone.now() - timedelta(days=days_ago))


@pytest.mark.parametrize("profile", ["custodian", "mgp"])
def test_the_dormancy_sweep_sends_a_manual_review_memory_to_a_person(agent, remember, settings, profile):
    if profile == "mgp":
        settings.CUSTODIAN_POLICY_FILE = MGP_PROFILE
    kept, quiet = remember("keep until a person says so", retention_policy=MANUAL), remember("quiet note")
    _last_applied(kept, 100)
    _last_applied(quiet, 100)

    call_command("dormancy_sweep", verbosity=0)

    reviewed = Proposal.objects.get(action="dormant", target_id=kept.id)
    assert (reviewed.classification, reviewed.status) == ("review_required", "pending_review")
    assert reviewed.policy_facts["escalation"] == "retires_manual_retention"
    automatic = Proposal.objects.get(action="dormant", target_id=quiet.id)
    assert automatic.matched_rule == "auto-system-dormancy"
    kept.refresh_from_db()
    assert kept.state == "active"
    approve(make_person("keeper", agent.tenant), reviewed)
    assert apply_released(reviewed).outcome == "applied"
    kept.refresh_from_db()
    assert kept.state == "dormant"


def test_the_custodian_rule_set_names_the_manual_retention_rule_for_dormancy(remember):
    kept = remember("keep until a person says so", retention_policy=MANUAL)
    _last_applied(kept, 100)
    call_command("dormancy_sweep", verbosity=0)
    proposal = Proposal.objects.get(action="dormant", target_id=kept.id)
    assert proposal.matched_rule == "review-manual-retention"


def test_a_dreaming_merge_never_retires_a_manual_review_memory_unreviewed(
    remember,
    dreaming_mode,  # noqa: F811
):
    dreaming_mode("auto")
    remember("Alice prefers weekly summaries", retention_policy=MANUAL)
    remember("Alice prefers weekly summaries.", retention_policy=MANUAL)
    dreaming_pass()
    run = DreamingRun.objects.get()
    (retire,) = Proposal.objects.filter(dreaming_run=run, action="dormant")
    assert (retire.classification, retire.status) == ("review_required", "pending_review")
    assert retire.matched_rule == "review-manual-retention"


def test_the_compaction_sweep_never_takes_a_manual_review_memory(
    capacity,  # noqa: F811
    remember,
):
    manual = [remember(f"kept note {n}", retention_policy=MANUAL) for n in range(4)]
    assert propose_compactions() == 0  # over capacity, but nothing in it may be compacted
    persistent = [remember(f"plain note {n}") for n in range(2)]
    assert propose_compactions() == 1
    members = {m["memory_id"] for m in Proposal.objects.get(action="compact").fields["members"]}
    assert members <= {str(memory.id) for memory in persistent}
    assert not members & {str(memory.id) for memory in manual}


def test_no_rule_file_lets_the_dormancy_sweep_retire_a_manual_review_memory(remember, settings, tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text(
        textwrap.dedent(
            """
            version: "hostile"
            rules:
              - {id: auto-everything, when: {}, verdict: auto_apply, reasons: [yes]}
              - {id: review-rest, when: {}, verdict: review_required, reasons: [rest]}
            """
        )
    )
    settings.CUSTODIAN_POLICY_FILE = path
    kept = remember("keep until a person says so", retention_policy=MANUAL)
    _last_applied(kept, 100)
    call_command("dormancy_sweep", verbosity=0)
    proposal = Proposal.objects.get(action="dormant", target_id=kept.id)
    assert (proposal.classification, proposal.matched_rule) == ("review_required", "review-rest")
