"""Create the reviewers, auditors and agents-admin groups with their model permissions.

Workspace access (deciding or auditing one tenant) is an object permission
granted per tenant with ``grant_reviewer`` / ``grant_auditor``; these groups
only carry what the admin needs to show each role its pages.
"""

from django.db import migrations

from reviews.roles import ROLE_GROUPS, ensure_role_groups

def create_groups(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    ensure_role_groups(apps.get_model("auth", "Group"), apps.get_model("auth", "Permission"), missing_ok=True)


def delete_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLE_GROUPS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0001_initial"),
        ("proposals", "0002_historicalproposal_memory_scope_and_more"),
        ("executor", "0002_receipts_append_only"),
        ("memory_core", "0001_initial"),
        ("evidence", "0001_initial"),
        ("tenancy", "0002_alter_tenant_options_usertoken"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]
    operations = [migrations.RunPython(create_groups, delete_groups)]
