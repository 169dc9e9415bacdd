"""Arrange helpers built on the real services (no hand-made rows)."""

import itertools
import uuid
from dataclasses import dataclass
from typing import Any, cast

from django.contrib.auth.models import User
from guardian.shortcuts import assign_perm
from rest_framework.test import APIClient

from evidence.models import EvidenceRevision
from evidence.services import register_evidence
from proposals.payloads import ProposalPayload
from proposals.services import submit_proposal
from tenancy.models import Agent, Tenant
from tenancy.services import grant_delegation, issue_agent_token

_counter = itertools.count(1)


@dataclass
class AgentHandle:
    agent: Agent
    token: str

    @property
    def tenant(self) -> Tenant:
        return self.agent.tenant

    @property
    def client(self) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {self.token}")
        return client


# Subjects a test agent acts for unless a test says otherwise (an operator's grants).
DEFAULT_DELEGATIONS = ({"kind": "user", "id": "pm-alice"}, {"kind": "org", "id": "quant-desk"})


def make_agent(
    tenant_name: str, agent_name: str, acts_for: tuple[dict, ...] = DEFAULT_DELEGATIONS
) -> AgentHandle:
    tenant, _ = Tenant.objects.get_or_create(name=tenant_name)
    token, raw = issue_agent_token(tenant=tenant, agent_name=agent_name)
    for subject in acts_for:
        grant_delegation(agent=token.agent, subject=subject, reason="test operator grant")
    return AgentHandle(token.agent, raw)


def make_evidence(agent: Agent, content: Any = None, kind: str = "backtest_run") -> EvidenceRevision:
    n = next(_counter)
    return register_evidence(
        agent=agent,
        kind=kind,
        external_ref=f"run-{n}",
        content=content if content is not None else {"ic_mean": 0.021, "ic_ir": 0.35, "run": n},
    )


def factor_fact(**overrides) -> dict:
    memory = {
        "subject": {"kind": "org", "id": "quant-desk"},
        "scope": "org",
        "type": "semantic_fact",
        "content": {
            "statement": "momentum_12_1 shows unstable IC after industry neutralisation",
            "factor": "momentum_12_1",
            "universe": "CSI800",
            "horizon": "20d",
            "metric": "rank_ic",
            "value": 0.012,
            "conclusion": "unstable after neutralisation",
        },
        "sensitivity": "internal",
        "confidence": 0.7,
        "dedupe_key": "factor:momentum_12_1:ic_stability",
    }
    memory.update(overrides)
    return memory


def user_preference(**overrides) -> dict:
    memory = {
        "subject": {"kind": "user", "id": "pm-alice"},
        "scope": "user",
        "type": "preference",
        "content": {
            "statement": "Alice prefers weekly summaries",
            "preference_key": "summary_cadence",
            "preference_value": "weekly",
        },
        "sensitivity": "internal",
    }
    memory.update(overrides)
    return memory


def owner_context(subject: dict | None = None, **extra) -> dict:
    return {
        "acting_for_subject": subject or {"kind": "user", "id": "pm-alice"},
        "consent_basis": "explicit",
        "risk_level": "low",
        "channel": "chat",
        **extra,
    }


def create_payload(memory: dict, evidence: list[EvidenceRevision], context: dict | None = None) -> dict:
    return {
        "action": "create",
        "memory": memory,
        "evidence": [revision.binding() for revision in evidence],
        "policy_context": context if context is not None else owner_context(),
        "rationale": "observed in the latest backtest",
    }


def as_payload(body: dict) -> ProposalPayload:
    """The typed payload the services take, from the JSON body an agent would post (same values)."""
    payload = cast(ProposalPayload, dict(body))
    if "memory_id" in body:
        payload["memory_id"] = uuid.UUID(str(body["memory_id"]))
    return payload


def submit(agent: Agent, payload: dict, key: str | None = None):
    """Submit through the real service (the REST layer has its own tests); return the proposal."""
    from core.canonical import digest

    return submit_proposal(
        agent=agent,
        idempotency_key=key or f"key-{next(_counter)}",
        payload=as_payload(payload),
        request_hash=digest(payload),
    ).proposal


TEST_WORKER = {"host": "test", "pid": 0, "task_id": "t"}


def apply_entry(entry_id, worker: dict | None = None):
    """Apply one outbox entry through the executor's entry point; return its receipt, if it has one."""
    from executor.models import Receipt
    from executor.services import apply_entries

    apply_entries(entry_ids=[entry_id], worker=worker or TEST_WORKER)
    return Receipt.objects.filter(outbox_entry_id=entry_id).first()


def apply_released(proposal):
    """Run the executor on the proposal's latest outbox entry; return the receipt."""
    from proposals.models import OutboxEntry

    return apply_entry(OutboxEntry.objects.filter(proposal=proposal).latest("created_at").id)


def make_person(username: str, tenant=None, perm: str = "tenancy.decide_proposal") -> User:
    user = User.objects.create_user(username, password="pw")
    if tenant is not None:
        assign_perm(perm, user, tenant)
    return user


def approve(person, proposal, reason: str = "ok"):
    """Record one approval of the proposal's current digest through the real service."""
    from reviews.services import record_decision

    return record_decision(
        actor=person,
        proposal_id=proposal.pk,
        decision="approve",
        reason=reason,
        represented_owner="",
        action_digest=proposal.action_digest,
        channel="api",
    )
