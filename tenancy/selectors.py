"""Which tenants a person may see or operate in: the one rule every people-facing page uses.

Tenant access is a django-guardian object permission on the tenant
(``tenancy.decide_proposal`` for reviewers and operators,
``tenancy.audit_tenant`` for auditors). Global (model-level) grants are
deliberately not accepted, so a permission given for one workspace never
leaks into another. The review UI, the reviewer REST endpoints and the admin
all ask here.
"""

from django.db.models import QuerySet
from guardian.shortcuts import get_objects_for_user

from tenancy.models import Tenant

DECIDE = "tenancy.decide_proposal"
AUDIT = "tenancy.audit_tenant"
PUBLISH = "tenancy.publish_registration"


def decidable_tenants(user) -> QuerySet[Tenant]:
    """Return the tenants in which ``user`` may decide proposals (and operate the admin's actions)."""
    return get_objects_for_user(user, DECIDE, klass=Tenant, accept_global_perms=False)


def viewable_tenants(user) -> QuerySet[Tenant]:
    """Return the tenants whose rows ``user`` may see (reviewers and auditors)."""
    return get_objects_for_user(user, [DECIDE, AUDIT], klass=Tenant, any_perm=True, accept_global_perms=False)


def publishing_tenants(user) -> QuerySet[Tenant]:
    """Return the tenants whose registration ``user`` may ask to publish, or approve publishing."""
    return get_objects_for_user(user, PUBLISH, klass=Tenant, accept_global_perms=False)
