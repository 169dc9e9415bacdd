"""Seal the decisions on proposals still open at upgrade, as they stand (the operator vouches for them).

Decisions are append-only by trigger; only this migration, as the owner,
lifts the trigger for the length of its own transaction.
"""

from django.db import migrations

OPEN = ["pending_review", "changes_requested", "released"]
TRIGGER = "reviews_reviewdecision_append_only"


def seal_open_decisions(apps, schema_editor):
    from reviews.models import decision_seal

    Decision = apps.get_model("reviews", "ReviewDecision")
    rows = list(
        Decision.objects.filter(proposal__status__in=OPEN).values(
            "id", "tenant_id", "proposal_id", "actor__username", "decision", "action_digest"
        )
    )
    if not rows:
        return
    postgres = schema_editor.connection.vendor == "postgresql"
    if postgres:
        schema_editor.execute(f"ALTER TABLE reviews_reviewdecision DISABLE TRIGGER {TRIGGER}")
    for row in rows:
        sealed = {
            "id": str(row["id"]),
            "tenant_id": str(row["tenant_id"]),
            "proposal_id": str(row["proposal_id"]),
            "actor": row["actor__username"],
            "decision": row["decision"],
            "action_digest": row["action_digest"],
        }
        Decision.objects.filter(pk=row["id"]).update(seal=decision_seal(sealed))
    if postgres:
        schema_editor.execute(f"ALTER TABLE reviews_reviewdecision ENABLE TRIGGER {TRIGGER}")


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0004_decision_seal_and_history_append_only"),
        ("proposals", "0005_verdict_seal"),
    ]

    operations = [migrations.RunPython(seal_open_decisions, migrations.RunPython.noop)]
