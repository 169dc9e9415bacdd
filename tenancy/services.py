"""Tenancy owns tenants, agents and agent tokens."""

import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import DomainError, NotFound, TenantMismatch
from tenancy.models import Agent, AgentToken, BearerToken, Delegation, Tenant, UserToken

SYSTEM_AGENT_NAME = "custodian-system"
# Names Custodian keeps for its own identities; no agent so named ever holds a token.
RESERVED_AGENT_PREFIX = "custodian-"


class ReservedIdentity(DomainError):
    code = "reserved_identity"
    status = 403
    title = "Custodian's own identities never hold tokens"


class ActingForNotGranted(DomainError):
    code = "acting_for_not_granted"
    status = 403
    title = "No live delegation lets this agent act for that subject"


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

    The raw key is returned once and never stored. Reserved names (the
    system agent's among them) are refused: a token for Custodian's own
    identity would let a caller pass for Custodian's sweeps.
    """
    if agent_name.startswith(RESERVED_AGENT_PREFIX):
        raise ReservedIdentity(f"Agent names starting with {RESERVED_AGENT_PREFIX!r} are reserved")
    agent, _ = Agent.objects.get_or_create(tenant=tenant, name=agent_name)
    if agent.is_system:
        raise ReservedIdentity(f"{agent} is a system agent")
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


def bind_policy_context(
    agent: Agent,
    context: dict[str, Any],
    *,
    may_act: Callable[[Agent, dict[str, Any]], bool] | None = None,
) -> dict[str, Any]:
    """Turn the claims in a policy context into facts, or refuse them.

    Tenant and actor come from the credential; a subject the agent says it
    acts for must be the agent itself or covered by a live :class:`Delegation`.
    This is the one place both the write policy and the read policy get
    their acting-for fact from. ``may_act`` answers like :func:`may_act_for`
    from delegations the caller already read (the policy reads them with the
    evidence, in one query); it defaults to reading them now.
    """
    may_act = may_act or may_act_for
    if context.get("tenant_id") not in (None, str(agent.tenant_id), agent.tenant.name):
        raise TenantMismatch("policy_context.tenant_id names another tenant")
    if context.get("actor_agent") not in (None, agent.name, str(agent.id)):
        raise TenantMismatch("policy_context.actor_agent names another agent")
    subject = context.get("acting_for_subject")
    if subject and not may_act(agent, subject):
        raise ActingForNotGranted(
            f"{agent.name} holds no live delegation for {subject.get('kind')}:{subject.get('id')}"
        )
    return {**context, "tenant_id": str(agent.tenant_id), "actor_agent": agent.name}


def acts_for_itself(agent: Agent, subject: dict[str, Any]) -> bool:
    """True if ``agent`` needs no delegation to act for ``subject`` (itself; system agents for all)."""
    return agent.is_system or subject == {"kind": "agent", "id": agent.name}


def may_act_for(agent: Agent, subject: dict[str, Any]) -> bool:
    """True if ``agent`` is ``subject`` or holds a live delegation for it (system agents act for all)."""
    if acts_for_itself(agent, subject):
        return True
    return (
        Delegation.objects.live()
        .filter(agent=agent, subject_kind=subject.get("kind"), subject_id=subject.get("id"))
        .exists()
    )


@transaction.atomic
def grant_delegation(
    *,
    agent: Agent,
    subject: dict[str, str],
    granted_by=None,
    expires_at: datetime | None = None,
    reason: str = "",
) -> Delegation:
    """Let ``agent`` act for ``subject`` (until ``expires_at``, if given); history records who."""
    delegation = Delegation(
        agent=agent,
        subject_kind=subject["kind"],
        subject_id=subject["id"],
        granted_by=granted_by,
        reason=reason,
        expires_at=expires_at,
    )
    delegation.full_clean(exclude=["tenant"])
    delegation.save()
    return delegation


@transaction.atomic
def revoke_delegations(*, agent: Agent, subject: dict[str, str]) -> int:
    """Revoke every live grant letting ``agent`` act for ``subject``; return how many."""
    now = timezone.now()
    revoked = 0
    for delegation in (
        Delegation.objects.live()
        .select_for_update()
        .filter(agent=agent, subject_kind=subject["kind"], subject_id=subject["id"])
    ):
        delegation.revoked_at = now
        delegation.save(update_fields=["revoked_at"])  # save(), not update(): history records it
        revoked += 1
    return revoked


def get_agent(*, tenant: Tenant, name: str) -> Agent:
    try:
        return Agent.objects.get(tenant=tenant, name=name)
    except Agent.DoesNotExist:
        raise NotFound(f"No agent {name!r} in {tenant.name}") from None


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
