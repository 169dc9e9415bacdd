"""Re-seal open Dreaming actions now that the seal binds their run (``Proposal.VERDICT_COLUMNS``).

A proposal outside any run seals exactly as before, so only open proposals
with a run change; as in 0005, the operator who migrates vouches for the
rows present now.
"""

from django.db import migrations

OPEN = ["pending_review", "changes_requested", "released"]
VERDICT_COLUMNS = (
    "id",
    "tenant_id",
    "submitted_by_id",
    "action_digest",
    "classification",
    "required_approvals",
    "gates",
    "matched_rule",
    "policy_fingerprint",
    "dreaming_run_id",
)


def reseal_open_dreaming_actions(apps, schema_editor):
    from proposals.models import verdict_seal

    Proposal = apps.get_model("proposals", "Proposal")
    rows = Proposal.objects.filter(status__in=OPEN, dreaming_run__isnull=False).values(*VERDICT_COLUMNS)
    for row in list(rows):
        Proposal.objects.filter(pk=row["id"]).update(verdict_seal=verdict_seal(row))


class Migration(migrations.Migration):
    dependencies = [("proposals", "0011_dreaming_run")]

    operations = [migrations.RunPython(reseal_open_dreaming_actions, migrations.RunPython.noop)]
