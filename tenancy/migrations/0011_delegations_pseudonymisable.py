"""Grants and their history are kept, never deleted; an erasure replaces the subject's id by its pseudonym.

A grant row changes only as its lifecycle moves it (``revoked_at``, set once; ``expires_at``) or
as an erasure pseudonymises it: ``subject_id`` from a clear id to ``erased:`` and 64 hex
digits, once. Its history rows change only by that pseudonymising.
"""

from django.db import migrations

from core.migrations_util import append_only_allowing


class Migration(migrations.Migration):
    dependencies = [
        ("tenancy", "0010_erase_subject_permission"),
    ]

    operations = [
        append_only_allowing(
            "tenancy_delegation",
            pseudonymised=["subject_id"],
            changing=["revoked_at", "expires_at"],
            when="OLD.revoked_at IS NULL OR NEW.revoked_at IS NOT DISTINCT FROM OLD.revoked_at",
        ),
        append_only_allowing("tenancy_historicaldelegation", pseudonymised=["subject_id"]),
    ]
