"""Make review decisions append-only in PostgreSQL itself, like receipts."""

from django.db import migrations

from core.migrations_util import append_only_trigger


class Migration(migrations.Migration):
    dependencies = [("reviews", "0002_groups")]
    operations = [append_only_trigger("reviews_reviewdecision")]
