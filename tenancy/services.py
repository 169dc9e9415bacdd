"""Tenancy owns tenants, agents and agent tokens."""

import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import DomainError, NotFound, TenantMismatch
from tenancy.models import Agent, AgentToken, BearerToken, Tenant, UserToken

SYSTEM_AGENT_NAME = "custodian-system"


class TenantExists(DomainError):
    code = "tenant_exists"
    status = 409
    title = "A tenant with this name already exists"


@transaction.atomic
def create_tenant(*, name: str) -> Tenant:
    """Create a tenant; refuse a duplicate name."""
    tenant = Tenant(name=name)
    tenant.full_clean(validate_unique=False)
    try:
        with transaction.atomic():
            tenant.save()
    except IntegrityError:
        raise TenantExists(f"Tenant {name!r} already exists") from None
    return tenant


def get_tenant(*, name: str) -> Tenant:
    try:
        return Tenant.objects.get(name=name)
    except Tenant.DoesNotExist:
        raise NotFound(f"No tenant named {name!r}") from None


@transaction.atomic
def issue_agent_token(
    *, tenant: Tenant, agent_name: str, expires_in_days: int | None = None
) -> tuple[AgentToken, str]:
    """Create the agent if needed and issue a new token; return it and the raw key.

    The raw key is returned once and never stored.
    """
    agent, _ = Agent.objects.get_or_create(tenant=tenant, name=agent_name)
    raw_key = _new_key(AgentToken)
    token = AgentToken.objects.create(
        agent=agent,
        key_hash=AgentToken.hash_key(raw_key),
        hint=raw_key[:12],
        expires_at=_expiry(expires_in_days),
    )
    return token, raw_key


@transaction.atomic
def issue_user_token(*, user, expires_in_days: int | None = None) -> tuple[UserToken, str]:
    """Issue a personal API token for a person (reviewers use it on the REST endpoints)."""
    raw_key = _new_key(UserToken)
    token = UserToken.objects.create(
        user=user,
        key_hash=UserToken.hash_key(raw_key),
        hint=raw_key[:12],
        expires_at=_expiry(expires_in_days),
    )
    return token, raw_key


def bind_policy_context(agent: Agent, context: dict[str, Any]) -> dict[str, Any]:
    """Refuse a policy context naming another tenant or actor; fill both from the credential."""
    if context.get("tenant_id") not in (None, str(agent.tenant_id), agent.tenant.name):
        raise TenantMismatch("policy_context.tenant_id names another tenant")
    if context.get("actor_agent") not in (None, agent.name, str(agent.id)):
        raise TenantMismatch("policy_context.actor_agent names another agent")
    return {**context, "tenant_id": str(agent.tenant_id), "actor_agent": agent.name}


def system_agent(*, tenant_id) -> Agent:
    """Return the tenant's system agent, the submitter of proposals Custodian makes itself."""
    agent, _ = Agent.objects.get_or_create(
        tenant_id=tenant_id, name=SYSTEM_AGENT_NAME, defaults={"is_system": True}
    )
    return agent


def _expiry(days: int | None):
    """Tokens expire after ``days`` (default ``CUSTODIAN_TOKEN_TTL_DAYS``; 0 means never)."""
    days = settings.CUSTODIAN_TOKEN_TTL_DAYS if days is None else days
    return timezone.now() + timedelta(days=days) if days else None


def _new_key(token_class: type[BearerToken]) -> str:
    return token_class.PREFIX + secrets.token_urlsafe(32)


@transaction.atomic
def revoke_agent_tokens(*, tenant: Tenant, agent_name: str, hint: str = "") -> int:
    """Revoke an agent's active tokens (only the one starting with ``hint`` if given)."""
    tokens = AgentToken.objects.active().filter(agent__tenant=tenant, agent__name=agent_name)
    if hint:
        tokens = tokens.filter(hint__startswith=hint[:12])
    return tokens.update(revoked_at=timezone.now())
