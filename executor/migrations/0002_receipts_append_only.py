"""Make receipts append-only in PostgreSQL itself, not only in the ORM."""

from django.db import migrations

from core.migrations_util import append_only_trigger


class Migration(migrations.Migration):
    dependencies = [("executor", "0001_initial")]
    operations = [append_only_trigger("executor_receipt")]
