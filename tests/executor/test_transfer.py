"""export_tenant / import_tenant: a full round trip, and refusals that leave nothing behind."""

import json

import pytest
from django.core.management import CommandError, call_command

from executor.models import Receipt
from memory_core.models import AccessEvent, Memory
from proposals.models import Proposal
from reviews.models import ReviewDecision
from tenancy.models import Tenant
from tests.factories import (
    apply_released,
    approve,
    create_payload,
    factor_fact,
    make_evidence,
    make_person,
    submit,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def populated(agent, api, remember):
    """A tenant with reviewed and automatic memories, an expiry, a denial and audited reads."""
    pm = make_person("pm-export", agent.tenant)
    fact = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    approve(pm, fact)
    apply_released(fact)
    remember("weekly summaries")
    expiring = remember("short note")
    from tests.lifecycle.test_lifecycle_verbs import drive

    drive(agent, expiring, "expire", [])
    api.post("/api/v1/recall/search", {"query": "weekly"}, format="json")
    return agent.tenant


def _snapshot(tenant):
    return {
        "memories": sorted(
            (str(m.id), m.revision, m.state, json.dumps(m.content, sort_keys=True))
            for m in Memory.objects.filter(tenant=tenant)
        ),
        "history": Memory.history.filter(tenant=tenant).count(),
        "proposals": Proposal.objects.filter(tenant=tenant).count(),
        "decisions": ReviewDecision.objects.filter(tenant=tenant).count(),
        "receipts": list(
            Receipt.objects.filter(tenant=tenant).order_by("seq").values_list("hash", flat=True)
        ),
        "reads": AccessEvent.objects.filter(tenant=tenant).count(),
    }


def test_export_then_wipe_then_import_restores_everything(populated, tmp_path, capsys):
    before = _snapshot(populated)
    path = tmp_path / "tenant.jsonl"
    call_command("export_tenant", tenant=populated.name, output=str(path))
    call_command("flush", interactive=False, verbosity=0)
    assert not Tenant.objects.exists()

    call_command("import_tenant", input=str(path))

    tenant = Tenant.objects.get(name=populated.name)
    assert _snapshot(tenant) == before
    assert before["receipts"] and before["decisions"] == 1
    call_command("verify_receipts")
    assert "memories match" in capsys.readouterr().out


def test_import_refuses_a_tampered_chain_and_keeps_nothing(populated, tmp_path):
    path = tmp_path / "tenant.jsonl"
    call_command("export_tenant", tenant=populated.name, output=str(path))
    lines = path.read_text().splitlines()
    tampered = [
        line.replace('"outcome": "applied"', '"outcome": "stale"', 1)
        if '"model": "executor.receipt"' in line
        else line
        for line in lines
    ]
    assert tampered != lines
    path.write_text("\n".join(tampered) + "\n")
    call_command("flush", interactive=False, verbosity=0)
    with pytest.raises(CommandError, match="does not verify"):
        call_command("import_tenant", input=str(path))
    assert not Tenant.objects.exists() and not Memory.objects.exists()


def test_import_refuses_an_existing_tenant(populated, tmp_path):
    path = tmp_path / "tenant.jsonl"
    call_command("export_tenant", tenant=populated.name, output=str(path))
    with pytest.raises(CommandError, match="already exists"):
        call_command("import_tenant", input=str(path))
