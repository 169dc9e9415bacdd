"""The outbox moves from the executor into proposals: ``release()`` now writes it directly.

The table is renamed, not recreated, so pending entries, their indexes, grants
and foreign keys survive; the content type moves with it, so the permissions
people and groups hold on outbox entries keep working.
"""

import uuid

import django.db.models.deletion
from django.db import migrations, models


def move_content_type(apps, schema_editor, source="executor", target="proposals"):
    content_types = apps.get_model("contenttypes", "ContentType")
    if not content_types.objects.filter(app_label=target, model="outboxentry").exists():
        content_types.objects.filter(app_label=source, model="outboxentry").update(app_label=target)


def move_content_type_back(apps, schema_editor):
    move_content_type(apps, schema_editor, source="proposals", target="executor")


class Migration(migrations.Migration):
    dependencies = [
        ("proposals", "0005_verdict_seal"),
        ("tenancy", "0008_delegation"),
        ("executor", "0008_receipt_outcome_dedupe_conflict"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE executor_outboxentry RENAME TO proposals_outboxentry",
                    "ALTER TABLE proposals_outboxentry RENAME TO executor_outboxentry",
                )
            ],
            state_operations=[
                migrations.CreateModel(
                    name="OutboxEntry",
                    fields=[
                        ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ("action_digest", models.CharField(max_length=64)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "Pending"),
                                    ("dispatched", "Dispatched"),
                                    ("done", "Done"),
                                    ("dead", "Dead"),
                                ],
                                default="pending",
                                max_length=16,
                            ),
                        ),
                        ("attempts", models.PositiveIntegerField(default=0)),
                        ("available_at", models.DateTimeField()),
                        ("lease_expires_at", models.DateTimeField(blank=True, null=True)),
                        ("last_error", models.TextField(blank=True)),
                        (
                            "requested_by",
                            models.CharField(blank=True, help_text="Who requeued a dead entry", max_length=150),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "proposal",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="outbox_entries",
                                to="proposals.proposal",
                            ),
                        ),
                        (
                            "requeued_from",
                            models.OneToOneField(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="requeued_as",
                                to="proposals.outboxentry",
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
                        "verbose_name_plural": "outbox entries",
                        "indexes": [
                            models.Index(
                                condition=models.Q(("status", "pending")),
                                fields=["available_at"],
                                name="outbox_pending_idx",
                            ),
                            models.Index(
                                condition=models.Q(("status", "dispatched")),
                                fields=["lease_expires_at"],
                                name="outbox_lease_idx",
                            ),
                            models.Index(fields=["status", "-created_at"], name="outbox_status_idx"),
                        ],
                    },
                ),
            ],
        ),
        migrations.RunPython(move_content_type, move_content_type_back),
    ]
