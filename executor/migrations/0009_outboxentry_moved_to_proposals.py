"""State only: the outbox table now belongs to proposals (proposals 0006 renamed it)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("executor", "0008_receipt_outcome_dedupe_conflict"),
        ("proposals", "0006_outboxentry"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="receipt",
                    name="outbox_entry",
                    field=models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="receipt",
                        to="proposals.outboxentry",
                    ),
                ),
                migrations.DeleteModel(name="OutboxEntry"),
            ],
        ),
    ]
