"""Proposals Custodian makes itself as a tenant's system agent (``provenance``'s fences and revalidations)."""

from core.canonical import digest
from proposals.models import Proposal
from proposals.payloads import ProposalPayload
from proposals.selectors import proposal_by_idempotency_key
from proposals.services.submission import create_proposal
from tenancy.models import Agent


def system_proposal(agent: Agent, *, key: str, payload: ProposalPayload) -> Proposal:
    """Create a proposal Custodian makes itself, once per key, inside the caller's transaction.

    The tenant's system agent is the submitter; the key is the idempotency key,
    so a consequence recomputed later finds the proposal it made the first time.
    """
    existing = proposal_by_idempotency_key(agent=agent, idempotency_key=key)
    if existing is not None:
        return existing
    request_hash = digest({**payload, "memory_id": str(payload["memory_id"])})
    return create_proposal(agent=agent, idempotency_key=key, payload=payload, request_hash=request_hash)
