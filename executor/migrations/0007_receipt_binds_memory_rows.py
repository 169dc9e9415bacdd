"""Receipts bind the memory rows they leave: the revision written and the one before, with evidence links.

Existing receipts keep both empty; ``Receipt.body_of`` leaves empty ones out,
so their hashes still verify.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("executor", "0006_receipt_outcome_unauthorised_release"),
    ]

    operations = [
        migrations.AddField(
            model_name="receipt",
            name="after_memory_hash",
            field=models.CharField(
                blank=True,
                help_text="The revision this receipt wrote, as stored, with its evidence links",
                max_length=64,
            ),
        ),
        migrations.AddField(
            model_name="receipt",
            name="before_memory_hash",
            field=models.CharField(
                blank=True,
                help_text="Revision before_revision as history keeps it after this receipt, with its evidence links",
                max_length=64,
            ),
        ),
    ]
