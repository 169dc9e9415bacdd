"""A compacted tenant exports and imports whole: its lineage, and receipts accounting for every row."""

import pytest
from django.core.management import call_command

from maintenance.compaction import propose_compactions
from memory_core.models import MemoryLineage
from proposals.models import Proposal
from tenancy.models import Tenant
from tests.factories import apply_released
from tests.maintenance.test_compaction import _four, capacity  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_compacted_tenant_round_trips(agent, capacity, remember, tmp_path, capsys):  # noqa: F811
    _four(remember)
    propose_compactions()
    assert apply_released(Proposal.objects.get(action="compact")).outcome == "applied"
    rows = ("successor_id", "source_id", "source_revision")
    lineage = sorted(MemoryLineage.objects.values_list(*rows))
    path = tmp_path / "tenant.jsonl"
    call_command("export_tenant", tenant=agent.tenant.name, output=str(path))
    call_command("flush", interactive=False, verbosity=0)
    assert not MemoryLineage.objects.exists()

    call_command("import_tenant", input=str(path))  # refused unless the chain and the rows verify
    assert Tenant.objects.filter(name=agent.tenant.name).exists()
    assert lineage and sorted(MemoryLineage.objects.values_list(*rows)) == lineage
    call_command("verify_receipts")
    assert "memories match" in capsys.readouterr().out
