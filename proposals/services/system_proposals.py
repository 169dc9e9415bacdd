"""Proposals Custodian makes itself: fences and revalidations."""

from django.db.models import F

from core.canonical import digest
from evidence.models import EvidenceRevision
from memory_core.models import Memory, MemoryEvidence
from proposals.models import Proposal
from proposals.payloads import ProposalPayload
from proposals.selectors import proposal_by_idempotency_key
from proposals.services.submission import create_proposal
from tenancy.models import Agent
from tenancy.services import system_agent

# --- Evidence failure: block, fence, revalidate ------------------------------


def block_proposals_citing(revision: EvidenceRevision) -> int:
    """Block every open proposal bound to an invalidated evidence revision (caller's transaction)."""
    blocked = 0
    for proposal in Proposal.objects.select_for_update().filter(
        evidence_links__evidence_revision=revision, status__in=Proposal.BLOCKABLE_STATUSES
    ):
        proposal.transition_to(Proposal.Status.BLOCKED_EVIDENCE)
        proposal.outcome = "evidence_invalid"
        proposal.save(update_fields=["status", "outcome", "updated_at"])
        blocked += 1
    return blocked


def propose_fences(revision: EvidenceRevision) -> list[Proposal]:
    """Record, through the executor, that memories resting on ``revision`` are fenced."""
    agent = system_agent(tenant_id=revision.tenant_id)
    binding = f"{revision.source_id}@{revision.revision}"
    return [
        _system_proposal(
            agent,
            key=f"fence:{memory.id}:{memory.revision}:{binding}",
            payload={
                "action": Proposal.Action.FENCE,
                "memory_id": memory.id,
                "base_revision": memory.revision,
                "reason": f"evidence {binding} invalidated: {revision.status_reason}"[:2000],
            },
        )
        for memory in _memories_resting_on(revision_ids=[revision.id])
    ]


def propose_revalidations(new_revision: EvidenceRevision) -> list[Proposal]:
    """Propose rebinding every memory fenced by an invalidated revision of the same source."""
    invalidated = EvidenceRevision.objects.filter(
        source_id=new_revision.source_id, status=EvidenceRevision.Status.INVALIDATED
    ).values_list("id", flat=True)
    agent = system_agent(tenant_id=new_revision.tenant_id)
    memories = _memories_resting_on(revision_ids=list(invalidated))
    current = {memory.id: memory.revision for memory in memories}
    kept_by_memory: dict = {memory.id: [] for memory in memories}
    for link in MemoryEvidence.objects.filter(memory_id__in=current).select_related("evidence_revision"):
        same_source = link.evidence_revision.source_id == new_revision.source_id
        if link.memory_revision == current[link.memory_id] and not same_source:
            kept_by_memory[link.memory_id].append(link.evidence_revision.binding())
    proposals = []
    for memory in memories:
        kept = kept_by_memory[memory.id]
        proposals.append(
            _system_proposal(
                agent,
                key=f"revalidate:{memory.id}:{memory.revision}:{new_revision.id}",
                payload={
                    "action": Proposal.Action.REVALIDATE,
                    "memory_id": memory.id,
                    "base_revision": memory.revision,
                    "reason": f"evidence replaced by {new_revision.source_id}@{new_revision.revision}",
                    "evidence": [*kept, new_revision.binding()],
                },
            )
        )
    return proposals


def _memories_resting_on(*, revision_ids: list) -> list[Memory]:
    return list(
        Memory.objects.filter(
            evidence_links__evidence_revision_id__in=revision_ids,
            evidence_links__memory_revision=F("revision"),
        )
        .exclude(state=Memory.State.DELETED)
        .distinct()
    )


def _system_proposal(agent: Agent, *, key: str, payload: ProposalPayload) -> Proposal:
    """Create a proposal Custodian makes itself, once per key, inside the caller's transaction."""
    existing = proposal_by_idempotency_key(agent=agent, idempotency_key=key)
    if existing is not None:
        return existing
    request_hash = digest({**payload, "memory_id": str(payload["memory_id"])})
    return create_proposal(agent=agent, idempotency_key=key, payload=payload, request_hash=request_hash)
