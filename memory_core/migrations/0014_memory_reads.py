"""Daily read counts per memory (ranking's activation), backfilled from the access events."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Count
from django.db.models.functions import TruncDate

BATCH = 5000


def backfill(apps, schema_editor):
    """Count each memory's successful gets per day from the access event items already recorded."""
    AccessEventItem = apps.get_model("memory_core", "AccessEventItem")
    MemoryReads = apps.get_model("memory_core", "MemoryReads")
    rows = (
        AccessEventItem.objects.filter(event__action="get", event__outcome="ok")
        .annotate(day=TruncDate("event__created_at"))
        .values("tenant_id", "memory_id", "day")
        .annotate(reads=Count("event_id", distinct=True))
        .order_by()
    )
    batch = []
    for row in rows.iterator(chunk_size=BATCH):
        batch.append(MemoryReads(**row))
        if len(batch) == BATCH:
            MemoryReads.objects.bulk_create(batch)
            batch = []
    MemoryReads.objects.bulk_create(batch)


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0013_accessevent_registration_version"),
        ("tenancy", "0008_delegation"),
    ]

    operations = [
        migrations.CreateModel(
            name="MemoryReads",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("memory_id", models.UUIDField()),
                ("day", models.DateField()),
                ("reads", models.PositiveIntegerField(default=0)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="tenancy.tenant"
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "memory reads",
                "constraints": [
                    models.UniqueConstraint(fields=("tenant", "memory_id", "day"), name="memory_reads_one_row_a_day")
                ],
            },
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
