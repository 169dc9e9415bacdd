"""Observations in: each candidate memory an observation yields becomes a normal proposal.

Nothing here decides or writes a memory. The extractor's candidates and the
agent's own are submitted through ``submit_proposal`` one by one, with the
observation's evidence binding and policy context, so policy, reviewers and
the executor govern them exactly as any other proposal.
"""

import json
from dataclasses import dataclass
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder

from core.canonical import digest
from core.errors import DomainError
from evidence.models import EvidenceBinding
from observations.extraction import MAX_CANDIDATES, Observation, extractor, registered_keys
from proposals.models import Proposal
from proposals.payloads import MemoryFields, ProposalPayload
from proposals.services.submission import submit_proposal
from registrations.selectors import active_registration
from tenancy.models import Agent
from tenancy.services import bind_policy_context


@dataclass(frozen=True)
class CandidateOutcome:
    """One candidate's fate: the proposal it became (maybe a replay), or why it was refused."""

    origin: str  # "agent" or "extractor"
    memory: MemoryFields
    proposal: Proposal | None = None
    replayed: bool = False
    error: DomainError | None = None


def ingest_observation(
    *,
    agent: Agent,
    observation: Observation,
    evidence: list[EvidenceBinding],
    policy_context: dict[str, Any],
    candidates: list[MemoryFields],
) -> list[CandidateOutcome]:
    """Submit a proposal per candidate (the agent's first, then the extractor's, deduplicated).

    The idempotency key covers the observation (kind, text, fields, subject,
    scope, evidence) and the candidate, so resending an observation replays
    its proposals, while identical text from another source, subject or scope
    is a different submission and never the same memory.
    """
    bind_policy_context(agent, policy_context)  # a lying tenant, actor or subject refuses it all
    registration = active_registration(tenant_id=agent.tenant_id)
    extracted = extractor().extract(observation, keys=registered_keys(registration.document))
    identity = {
        "kind": observation.kind,
        "text": observation.text,
        "fields": observation.fields,
        "subject": observation.subject,
        "scope": observation.scope,
        "evidence": evidence,
    }
    seen: set[str] = set()
    outcomes = []
    for origin, memory in [*(("agent", m) for m in candidates), *(("extractor", m) for m in extracted)]:
        candidate_digest = _digest(memory)
        if candidate_digest in seen or len(seen) >= MAX_CANDIDATES:
            continue
        seen.add(candidate_digest)
        outcomes.append(_submit(agent, identity, origin, memory, evidence, policy_context))
    return outcomes


def check_contexts(*, agent: Agent, policy_contexts: list[dict[str, Any]]) -> None:
    """Refuse a whole conversation batch up front if any turn's policy context lies."""
    for context in policy_contexts:
        bind_policy_context(agent, context)


def _submit(
    agent: Agent,
    identity: dict,
    origin: str,
    memory: MemoryFields,
    evidence: list[EvidenceBinding],
    policy_context: dict[str, Any],
) -> CandidateOutcome:
    payload = ProposalPayload(
        action=Proposal.Action.CREATE,
        memory=memory,
        evidence=evidence,
        policy_context=policy_context,
        rationale=f"observed ({identity['kind']}, {origin})",
    )
    key = "obs:" + _digest({"observation": identity, "memory": memory})
    request_hash = _digest(payload)
    # The admission firewall reads what was observed too; it is scanned, never stored.
    payload["observation"] = {"text": identity["text"], "fields": identity["fields"]}
    try:
        submission = submit_proposal(
            agent=agent, idempotency_key=key, payload=payload, request_hash=request_hash
        )
    except DomainError as error:
        return CandidateOutcome(origin, memory, error=error)
    return CandidateOutcome(origin, memory, submission.proposal, submission.replayed)


def _digest(value: Any) -> str:
    """Digest validated input (UUIDs, datetimes) as the JSON it came from."""
    return digest(json.loads(json.dumps(value, cls=DjangoJSONEncoder)))
