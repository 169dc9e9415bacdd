"""Seal whom a decision was for, by pseudonym; an erasure may replace that owner by its pseudonym.

Decisions sealed before keep ``seal_version`` 1 and verify as they were sealed. The
append-only triggers now let exactly one UPDATE through: ``represented_owner`` from a
clear value to a pseudonym (``erased:`` and 64 hex digits), nothing else changed.
"""

from django.db import migrations, models

from core.migrations_util import append_only_allowing

HELP = "What the seal covers: 1, who decided what on which action; 2, also whom for, by pseudonym"


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0005_seal_open_decisions"),
    ]

    operations = [
        migrations.AddField(
            model_name="historicalreviewdecision",
            name="seal_version",
            field=models.PositiveSmallIntegerField(db_default=1, default=1, help_text=HELP),
        ),
        migrations.AddField(
            model_name="reviewdecision",
            name="seal_version",
            field=models.PositiveSmallIntegerField(db_default=1, default=1, help_text=HELP),
        ),
        append_only_allowing("reviews_reviewdecision", pseudonymised=["represented_owner"], replacing=True),
        append_only_allowing(
            "reviews_historicalreviewdecision", pseudonymised=["represented_owner"], replacing=True
        ),
    ]
