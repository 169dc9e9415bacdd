"""Which tenants a person may see or operate in: the one rule every people-facing page uses.

Tenant access is a django-guardian object permission on the tenant
(``tenancy.decide_proposal`` for reviewers and operators,
``tenancy.audit_tenant`` for auditors). Global (model-level) grants are
deliberately not accepted, so a permission given for one workspace never
leaks into another. The review UI, the reviewer REST endpoints and the admin
all ask here.
"""

import functools
from typing import cast

from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone
from guardian.shortcuts import get_objects_for_user

from core.hydrate import Selected, selected
from tenancy.models import Agent, AgentToken, Tenant

DECIDE = "tenancy.decide_proposal"
AUDIT = "tenancy.audit_tenant"
PUBLISH = "tenancy.publish_registration"
ERASE = "tenancy.erase_subject"


def decidable_tenants(user) -> QuerySet[Tenant]:
    """Return the tenants in which ``user`` may decide proposals (and operate the admin's actions)."""
    return get_objects_for_user(user, DECIDE, klass=Tenant, accept_global_perms=False)


def viewable_tenants(user) -> QuerySet[Tenant]:
    """Return the tenants whose rows ``user`` may see (reviewers and auditors)."""
    return get_objects_for_user(user, [DECIDE, AUDIT], klass=Tenant, any_perm=True, accept_global_perms=False)


def audited_tenants(user) -> QuerySet[Tenant]:
    """Return the tenants ``user`` audits (views, never decides, unless also granted ``decide_proposal``)."""
    return get_objects_for_user(user, AUDIT, klass=Tenant, accept_global_perms=False)


def admin_tenants(user, perm: str) -> QuerySet[Tenant]:
    """Return the tenants whose rows the admin shows ``user`` on the pages of a model viewed with ``perm``.

    The admin's own rule (``tenancy.admin``): an active staff member holding
    the model permission (e.g. ``executor.view_receipt``) sees the tenants
    they may view; anyone else none. Links into the admin ask here, so a link
    is drawn only where its page opens.
    """
    if not (user.is_active and user.is_staff and user.has_perm(perm)):
        return Tenant.objects.none()
    return viewable_tenants(user)


def publishing_tenants(user) -> QuerySet[Tenant]:
    """Return the tenants whose registration ``user`` may ask to publish, or approve publishing."""
    return get_objects_for_user(user, PUBLISH, klass=Tenant, accept_global_perms=False)


def erasing_tenants(user) -> QuerySet[Tenant]:
    """Return the tenants in which ``user`` may ask to erase a subject (never approve their own ask)."""
    return get_objects_for_user(user, ERASE, klass=Tenant, accept_global_perms=False)


def active_agent_token(key_hash: str) -> AgentToken | None:
    """The live token with this hash, its agent and the agent's tenant, in one prepared statement.

    Every agent request asks this first. The ORM spent longer compiling the joined query than
    the database took to answer it, so the statement is built once from the three models' fields
    and the row is turned into instances as the ORM would (``core.hydrate``).
    System agents have no usable tokens: they act only through the server's own services.
    """
    sql, parts = _agent_token_query()
    with connection.cursor() as cursor:
        cursor.execute(sql, [key_hash, connection.ops.adapt_datetimefield_value(timezone.now())])
        row = cursor.fetchone()
    if row is None:
        return None
    token, agent, tenant = cast(tuple[AgentToken, Agent, Tenant], tuple(part.instance(row) for part in parts))
    agent.tenant = tenant
    token.agent = agent
    return token


@functools.cache
def _agent_token_query() -> tuple[str, tuple[Selected, ...]]:
    token = selected(AgentToken, "t")
    agent = selected(Agent, "a", start=token.end)
    tenant = selected(Tenant, "n", start=agent.end)
    quote = connection.ops.quote_name
    sql = (
        f"SELECT {token.sql}, {agent.sql}, {tenant.sql} FROM {quote(AgentToken._meta.db_table)} t"  # noqa: S608
        f" JOIN {quote(Agent._meta.db_table)} a ON a.id = t.agent_id"
        f" JOIN {quote(Tenant._meta.db_table)} n ON n.id = a.tenant_id"
        " WHERE t.key_hash = %s AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > %s)"
        " AND NOT a.is_system"
    )
    return sql, (token, agent, tenant)
