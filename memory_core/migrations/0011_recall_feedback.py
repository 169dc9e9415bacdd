"""Owner feedback on recalled items: append-only rows, for every role (trigger as in 0007)."""

import django.db.models.deletion
from django.db import migrations, models

from core.migrations_util import append_only_trigger


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0010_accessevent_ranking_version"),
        ("tenancy", "0008_delegation"),
    ]

    operations = [
        migrations.CreateModel(
            name="RecallFeedback",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("memory_id", models.UUIDField()),
                ("revision", models.PositiveIntegerField()),
                (
                    "verdict",
                    models.CharField(
                        choices=[("useful", "Useful"), ("not_useful", "Not Useful")], max_length=16
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "agent",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="+", to="tenancy.agent"
                    ),
                ),
                (
                    "recall",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="feedback",
                        to="memory_core.accessevent",
                    ),
                ),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="+", to="tenancy.tenant"
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "recall feedback",
                "indexes": [models.Index(fields=["tenant", "memory_id"], name="recall_feedback_memory_idx")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("agent", "memory_id", "revision"), name="recall_feedback_once_per_revision"
                    )
                ],
            },
        ),
        append_only_trigger("memory_core_recallfeedback"),
    ]
