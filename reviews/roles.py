"""The role groups (reviewers, auditors, agents-admin) and their model permissions.

Workspace access (deciding or auditing one tenant) is an object permission
granted per tenant with ``grant_reviewer``; these groups only carry what the
admin needs to show each role its pages. A data migration creates them, and
a post_migrate hook recreates them after a flush (as Django does for
permissions).
"""

ROLE_GROUPS = {
    "reviewers": [
        "proposals.view_proposal",
        "proposals.view_proposalevidence",
        "memory_core.view_memory",
        "memory_core.view_historicalmemory",
        "evidence.view_evidencesource",
        "evidence.view_evidencerevision",
        "reviews.view_reviewdecision",
        "executor.view_receipt",
    ],
    "auditors": [
        "proposals.view_proposal",
        "proposals.view_historicalproposal",
        "proposals.view_proposalevidence",
        "memory_core.view_memory",
        "memory_core.view_historicalmemory",
        "memory_core.view_memoryevidence",
        "evidence.view_evidencesource",
        "evidence.view_evidencerevision",
        "reviews.view_reviewdecision",
        "reviews.view_historicalreviewdecision",
        "executor.view_receipt",
        "executor.view_receiptchain",
        "proposals.view_outboxentry",
    ],
    "agents-admin": [
        "tenancy.view_tenant",
        "tenancy.view_agent",
        "tenancy.add_agent",
        "tenancy.change_agent",
        "tenancy.view_agenttoken",
        "tenancy.change_agenttoken",
    ],
}


def ensure_role_groups(group_model, permission_model, *, missing_ok: bool = False) -> None:
    """Create the role groups if missing and give each exactly its permissions.

    ``missing_ok`` is for the data migration, which runs before later models
    exist; the post_migrate hook then sets the full list, and there a missing
    permission is an error.
    """
    for name, perms in ROLE_GROUPS.items():
        group, _ = group_model.objects.get_or_create(name=name)
        wanted = [
            permission_model.objects.filter(content_type__app_label=label, codename=codename).first()
            for label, codename in (perm.split(".") for perm in perms)
        ]
        if None in wanted and not missing_ok:
            missing = [perm for perm, found in zip(perms, wanted, strict=True) if found is None]
            raise LookupError(f"role group {name}: no such permissions {missing}")
        group.permissions.set([permission for permission in wanted if permission is not None])


def recreate_role_groups(sender, **kwargs) -> None:
    """post_migrate receiver (after migrate and after flush).

    post_migrate fires once per app; the groups are built on the first call
    at which every permission they need exists.
    """
    from django.contrib.auth.models import Group, Permission
    from django.db.models import Q

    needed = {tuple(perm.split(".")) for perms in ROLE_GROUPS.values() for perm in perms}
    match = Q()
    for label, codename in needed:
        match |= Q(content_type__app_label=label, codename=codename)
    if Permission.objects.filter(match).count() == len(needed):
        ensure_role_groups(Group, Permission)
