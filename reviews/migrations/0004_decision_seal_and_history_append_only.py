"""Seal review decisions (the executor counts only sealed approvals); decision history is append-only."""

from django.db import migrations, models

from core.migrations_util import append_only_trigger


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0003_decisions_append_only"),
    ]

    operations = [
        migrations.AddField(
            model_name="historicalreviewdecision",
            name="seal",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                help_text="Keyed digest by the deciding process: who decided what on which action",
                max_length=64,
            ),
        ),
        migrations.AddField(
            model_name="reviewdecision",
            name="seal",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                help_text="Keyed digest by the deciding process: who decided what on which action",
                max_length=64,
            ),
        ),
        append_only_trigger("reviews_historicalreviewdecision"),
    ]
