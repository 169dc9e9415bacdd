"""Reads of proposals, always within the caller's tenant."""

import uuid
from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet

from memory_core.models import Memory
from memory_core.selectors import active_memories_with_dedupe_key
from proposals.errors import ProposalNotFound
from proposals.models import DreamingRun, Proposal
from tenancy.models import Agent, Tenant


def proposal_list(*, tenant: Tenant) -> QuerySet[Proposal]:
    """Return the tenant's proposals (the API narrows them with ``proposals.filters``)."""
    return Proposal.objects.filter(tenant=tenant)


def proposal_detail(*, tenant: Tenant, proposal_id: uuid.UUID) -> Proposal:
    """Return one proposal; another tenant's id is not found."""
    proposal = Proposal.objects.filter(tenant=tenant, pk=proposal_id).first()
    if proposal is None:
        raise ProposalNotFound()
    return proposal


def proposal_by_idempotency_key(*, agent: Agent, idempotency_key: str) -> Proposal | None:
    """Return the proposal ``agent`` submitted under this key, or None (a unique constraint allows one)."""
    return Proposal.objects.filter(
        tenant_id=agent.tenant_id, submitted_by=agent, idempotency_key=idempotency_key
    ).first()


@dataclass(frozen=True)
class DedupeConflicts:
    """What else claims a proposal's dedupe key: the executor keeps one active memory per key."""

    memories: list[Memory]
    proposals: list[Proposal]

    def __bool__(self) -> bool:
        return bool(self.memories or self.proposals)


def dedupe_conflicts(proposal: Proposal, *, limit: int = 10) -> DedupeConflicts:
    """Return the active memories and open proposals that share ``proposal``'s dedupe key.

    Two indexed queries (``memory_dedupe_idx``, ``proposal_dedupe_idx``); the
    proposal's own target memory (and other proposals on it) is not a dedupe conflict.
    """
    key = proposal.claimed_dedupe_key
    if not key:
        return DedupeConflicts([], [])
    memories = active_memories_with_dedupe_key(
        tenant_id=proposal.tenant_id, dedupe_key=key, exclude_id=proposal.target_memory_id
    ).order_by("created_at", "pk")
    proposals = (
        Proposal.objects.filter(
            tenant_id=proposal.tenant_id, dedupe_key=key, status__in=Proposal.OPEN_STATUSES
        )
        .filter(action__in=Proposal.CLAIMS_DEDUPE_KEY)
        .exclude(target_memory_id=proposal.target_memory_id)
        .order_by("created_at", "pk")
    )
    return DedupeConflicts(list(memories[:limit]), list(proposals[:limit]))


def dreaming_runs(*, tenants) -> QuerySet[DreamingRun]:
    """Return the Dreaming runs of ``tenants`` (queryset or ids), newest first, with their proposals."""
    return (
        DreamingRun.objects.filter(tenant__in=tenants)
        .prefetch_related(Prefetch("proposals", queryset=Proposal.objects.order_by("created_at", "id")))
        .order_by("-created_at", "-id")
    )


def dreaming_run_status(run: DreamingRun) -> str:
    """The run's status as its (prefetched) proposals say."""
    return run.status_from([proposal.status for proposal in run.proposals.all()])
