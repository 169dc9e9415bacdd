"""Record who holds an outbox lease: the PostgreSQL backend of the worker connection (``executor.leases``)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("proposals", "0012_seal_dreaming_run")]

    operations = [
        migrations.AddField(
            model_name="outboxentry",
            name="lease_holder_pid",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="outboxentry",
            name="lease_holder_started_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
