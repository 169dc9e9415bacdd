"""Seal each proposal's verdict (executor/authority.py checks the seal before applying).

Proposals still open at upgrade are sealed as they stand: the operator who
migrates vouches for the rows present now. Closed ones never execute again.
"""

from django.db import migrations, models

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
)


def seal_open_proposals(apps, schema_editor):
    from proposals.models import verdict_seal

    Proposal = apps.get_model("proposals", "Proposal")
    for row in list(Proposal.objects.filter(status__in=OPEN).values(*VERDICT_COLUMNS)):
        Proposal.objects.filter(pk=row["id"]).update(verdict_seal=verdict_seal(row))


class Migration(migrations.Migration):
    dependencies = [
        ("proposals", "0004_alter_historicalproposal_action_and_more"),
    ]

    operations = [
        migrations.AddField(
            model_name="historicalproposal",
            name="verdict_seal",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                help_text="Keyed digest of the verdict and the action it covers (see VERDICT_COLUMNS)",
                max_length=64,
            ),
        ),
        migrations.AddField(
            model_name="proposal",
            name="verdict_seal",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                help_text="Keyed digest of the verdict and the action it covers (see VERDICT_COLUMNS)",
                max_length=64,
            ),
        ),
        migrations.RunPython(seal_open_proposals, migrations.RunPython.noop),
    ]
