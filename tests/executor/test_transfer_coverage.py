"""export_tenant / import_tenant carry every table a tenant's rows refer to, Dreaming runs included."""

import pytest
from django.apps import apps
from django.core.management import call_command

from executor.transfer import EXPORTED, NOT_EXPORTED
from proposals.models import DreamingRun, Proposal
from tenancy.models import Tenant
from tests.dreaming.conftest import dream_reviewers, dreaming_mode  # noqa: F401
from tests.factories import apply_released

# Shared rows an export names by natural key (people go by username) rather than carrying.
BY_NATURAL_KEY = {"auth.User"}


def _exported_labels() -> set[str]:
    return {model._meta.label for model, _ in EXPORTED}


def test_every_table_an_exported_row_refers_to_is_exported():
    exported, missing = _exported_labels(), []
    for model, _ in EXPORTED:
        for field in model._meta.concrete_fields:
            if field.is_relation and field.related_model is not None:
                target = field.related_model._meta.label
                if target not in exported | BY_NATURAL_KEY:
                    missing.append(f"{model._meta.label}.{field.name} -> {target}")
    assert missing == []


def test_every_tenant_table_is_exported_or_left_out_for_a_stated_reason():
    exported = _exported_labels()
    undecided = [
        model._meta.label
        for model in apps.get_models()
        if any(
            field.is_relation
            and field.related_model is not None
            and field.related_model._meta.label in exported
            for field in model._meta.concrete_fields
        )
        and model._meta.label not in exported
        and model._meta.label not in NOT_EXPORTED
    ]
    assert undecided == []
    assert not exported & set(NOT_EXPORTED)
    assert all(reason for reason in NOT_EXPORTED.values())


@pytest.mark.django_db(transaction=True)
def test_a_tenant_with_dreaming_runs_round_trips_and_its_chain_verifies(
    agent,
    remember,
    dreaming_mode,  # noqa: F811
    tmp_path,
    capsys,
):
    dreaming_mode("auto")
    remember("Alice prefers weekly summaries")
    remember("Alice prefers weekly summaries.")
    call_command("dreaming_pass", verbosity=0)
    run = DreamingRun.objects.get()
    for proposal in Proposal.objects.filter(dreaming_run=run).order_by("created_at", "id"):
        assert apply_released(proposal).outcome == "applied"
    before = (
        list(DreamingRun.objects.values_list("id", "window_digest", "plan")),
        sorted(Proposal.objects.filter(dreaming_run=run).values_list("id", "status")),
    )
    path = tmp_path / "tenant.jsonl"
    call_command("export_tenant", tenant=agent.tenant.name, output=str(path))
    call_command("flush", interactive=False, verbosity=0)

    call_command("import_tenant", input=str(path))

    assert Tenant.objects.filter(name=agent.tenant.name).exists()
    after = (
        list(DreamingRun.objects.values_list("id", "window_digest", "plan")),
        sorted(Proposal.objects.filter(dreaming_run=run.pk).values_list("id", "status")),
    )
    assert after == before and before[1]
    call_command("verify_receipts")
    assert "memories match" in capsys.readouterr().out
