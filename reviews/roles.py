"""The roles a person holds: the role groups and their model permissions, and where each role lands.

Workspace access (deciding or auditing one tenant) is an object permission
granted per tenant with ``grant_reviewer``; these groups only carry what the
admin needs to show each role its pages. A data migration creates them, and
a post_migrate hook recreates them after a flush (as Django does for
permissions). :func:`roles_of` reads what a person's grants add up to, and
:func:`landing` is the one place that says where they start.
"""

from dataclasses import dataclass
from typing import Any

from django.db.models import Q
from django.urls import reverse

from tenancy.selectors import admin_tenants, audited_tenants, decidable_tenants

RECEIPTS_PERM = "executor.view_receipt"
CHAIN_PERM = "executor.view_receiptchain"

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


def _existing_permissions(permission_model) -> dict[str, Any]:
    """The permissions the role groups name that exist, by ``app_label.codename`` (one query)."""
    match = Q()
    for perm in {perm for perms in ROLE_GROUPS.values() for perm in perms}:
        label, codename = perm.split(".")
        match |= Q(content_type__app_label=label, codename=codename)
    found = permission_model.objects.filter(match).select_related("content_type")
    return {f"{permission.content_type.app_label}.{permission.codename}": permission for permission in found}


def ensure_role_groups(
    group_model, permission_model, *, missing_ok: bool = False, found: dict[str, Any] | None = None
) -> None:
    """Create the role groups if missing and give each exactly its permissions.

    ``missing_ok`` is for the data migration, which runs before later models
    exist; the post_migrate hook then sets the full list, and there a missing
    permission is an error. ``found``: the permissions already read by
    :func:`_existing_permissions`.
    """
    found = _existing_permissions(permission_model) if found is None else found
    for name, perms in ROLE_GROUPS.items():
        group, _ = group_model.objects.get_or_create(name=name)
        missing = [perm for perm in perms if perm not in found]
        if missing and not missing_ok:
            raise LookupError(f"role group {name}: no such permissions {missing}")
        group.permissions.set([found[perm] for perm in perms if perm in found])


def recreate_role_groups(sender, **kwargs) -> None:
    """post_migrate receiver (after migrate and after flush).

    post_migrate fires once per app; the groups are built on the first call
    at which every permission they need exists, and written again only when
    they differ from what they should hold.
    """
    from django.contrib.auth.models import Group, Permission

    found = _existing_permissions(Permission)
    if len(found) < len({perm for perms in ROLE_GROUPS.values() for perm in perms}):
        return
    held = set(
        Group.permissions.through.objects.filter(group__name__in=ROLE_GROUPS).values_list(
            "group__name", "permission_id"
        )
    )
    if held != {(name, found[perm].pk) for name, perms in ROLE_GROUPS.items() for perm in perms}:
        ensure_role_groups(Group, Permission, found=found)


@dataclass(frozen=True)
class Roles:
    """What a person's grants add up to, for the top bar and the landing page."""

    decides: bool  # decide_proposal in some tenant: the review queue is theirs
    audits: bool  # audit_tenant in some tenant, with the admin's receipt list open to them
    receipts: bool  # the admin's receipt list opens for them, in some tenant
    chain: bool  # the admin's chain panel opens for them, in some tenant


def roles_of(user) -> Roles:
    """Return the roles ``user`` holds, from their tenant grants and model permissions."""
    receipts = admin_tenants(user, RECEIPTS_PERM).exists()
    return Roles(
        decides=decidable_tenants(user).exists(),
        audits=receipts and audited_tenants(user).exists(),
        receipts=receipts,
        chain=admin_tenants(user, CHAIN_PERM).exists(),
    )


def landing(user) -> str:
    """Return where ``/review/`` (and so signing in) takes ``user``.

    The queue for whoever decides somewhere, even if they audit too; the
    admin's receipt list for whoever only audits, since no proposal will
    ever wait for them. Anyone else gets the queue, which says nothing waits.
    """
    roles = roles_of(user)
    if roles.audits and not roles.decides:
        return reverse("admin:executor_receipt_changelist")
    return reverse("reviews:queue")
