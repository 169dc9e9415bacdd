"""One tenant per benchmark part: an agent with a token, two evidence revisions, a PM."""

from dataclasses import dataclass

from django.contrib.auth.models import User
from guardian.shortcuts import assign_perm

from evidence.models import EvidenceRevision
from evidence.services import register_evidence
from tenancy.models import Agent, Delegation, Tenant
from tenancy.services import issue_agent_token


@dataclass
class World:
    tenant: Tenant
    agent: Agent
    token: str
    evidence: list[EvidenceRevision]
    reviewer: User


def make_world(name: str) -> World:
    """Create (or reuse) tenant ``name`` with its agent, a fresh token, evidence and a reviewer."""
    tenant, _ = Tenant.objects.get_or_create(name=name)
    token, raw = issue_agent_token(tenant=tenant, agent_name=f"{name}-agent")
    agent = token.agent
    grant_users(agent, [f"pm-{n}" for n in range(50)])
    evidence = list(EvidenceRevision.objects.filter(tenant=tenant).order_by("source__kind")[:2]) or [
        register_evidence(agent=agent, kind=kind, external_ref=f"{name}-{kind}", content=content)
        for kind, content in (
            ("backtest_run", {"run": f"{name}-bt", "sharpe": 1.1, "ic_mean": 0.021}),
            ("ic_table", {"table": f"{name}-ic", "rows": 240, "ic_ir": 0.35}),
        )
    ]
    reviewer, created = User.objects.get_or_create(username=f"{name}-pm")
    if created:
        reviewer.set_password("bench")
        reviewer.save()
        assign_perm("tenancy.decide_proposal", reviewer, tenant)
    return World(tenant, agent, raw, evidence, reviewer)


def grant_users(agent: Agent, users: list[str]) -> None:
    """Let ``agent`` act for each of ``users`` (the operator's grants the preference payloads rely on)."""
    granted = set(
        Delegation.objects.filter(agent=agent, subject_kind="user", subject_id__in=users).values_list(
            "subject_id", flat=True
        )
    )
    Delegation.objects.bulk_create(
        Delegation(tenant_id=agent.tenant_id, agent=agent, subject_kind="user", subject_id=user)
        for user in users
        if user not in granted
    )


def preference_payload(world: World, n: int) -> dict:
    """An auto-apply create: the user's own explicit, low-risk preference, citing both evidence revisions."""
    user = f"pm-{n % 50}"
    return {
        "action": "create",
        "memory": {
            "subject": {"kind": "user", "id": user},
            "scope": "user",
            "type": "preference",
            "content": {
                "statement": f"{user} prefers weekly summaries of factor run {n}",
                "preference_key": f"summary_cadence_{n}",
                "preference_value": "weekly",
            },
            "sensitivity": "internal",
        },
        "evidence": [revision.binding() for revision in world.evidence],
        "policy_context": {
            "acting_for_subject": {"kind": "user", "id": user},
            "consent_basis": "explicit",
            "risk_level": "low",
            "channel": "chat",
        },
        "rationale": "stated by the user in chat",
    }
