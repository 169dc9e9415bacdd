"""When evidence changes, what rests on it follows, in the same transaction.

Invalidating a revision blocks the open proposals that cite it and proposes
fences for the memories resting on it; a new revision of a source proposes
revalidating the memories its invalidated revisions fenced. Both are direct
calls, so the whole consequence reads top to bottom here.
"""

from typing import Any

from django.db import transaction
from django.db.models import F

from evidence.models import EvidenceRevision, EvidenceSource
from evidence.services import append_revision, mark_invalidated
from memory_core.models import Memory, MemoryEvidence
from notifications import events
from notifications.events import Event
from notifications.services import record_event
from proposals.models import Proposal
from proposals.services.system_proposals import system_proposal
from tenancy.models import Agent
from tenancy.services import system_agent


@transaction.atomic(durable=True)
def add_evidence_revision(*, source: EvidenceSource, agent: Agent, content: Any) -> EvidenceRevision:
    """Append revision n+1 (n becomes superseded) and propose revalidating what an invalidation fenced."""
    revision = append_revision(source=source, agent=agent, content=content)
    propose_revalidations(revision)
    return revision


@transaction.atomic(durable=True)
def invalidate_evidence_revision(*, revision: EvidenceRevision, reason: str) -> EvidenceRevision:
    """Invalidate one revision (e.g. the backtest had a look-ahead bug); block and fence what rests on it."""
    revision, changed = mark_invalidated(revision=revision, reason=reason)
    if changed:
        record_event(
            Event(
                tenant_id=revision.tenant_id,
                type=events.EVIDENCE_INVALIDATED,
                data={"evidence_id": str(revision.source_id), "evidence_revision": revision.revision},
            )
        )
        block_proposals_citing(revision)
        propose_fences(revision)
    return revision


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
        system_proposal(
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
            system_proposal(
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
