"""Retention: a memory whose TTL has passed is proposed for expiry (recall already hides it)."""

from django.utils import timezone

from core.canonical import digest
from memory_core.models import Memory
from proposals.models import Proposal
from proposals.services.submission import submit_proposal
from tenancy.services import system_agent


def propose_retention_expiries(*, limit: int = 500) -> int:
    """Propose ``expire`` for active memories whose TTL has passed; return how many were proposed.

    The tenant's system agent submits them through the normal pipeline (the
    default rules auto-apply system retention, except for
    ``manual_review_required`` memories, which go to review). The
    idempotency key names the memory revision, so repeated sweeps never
    propose the same expiry twice.
    """
    due = Memory.objects.filter(state=Memory.State.ACTIVE, expires_at__lte=timezone.now()).order_by(
        "expires_at"
    )
    proposed = 0
    for memory in due[:limit]:
        submission = submit_proposal(
            agent=system_agent(tenant_id=memory.tenant_id),
            idempotency_key=f"retention:{memory.id}:{memory.revision}",
            payload={
                "action": Proposal.Action.EXPIRE,
                "memory_id": memory.id,
                "base_revision": memory.revision,
                "reason": f"retention: expired at {memory.expires_at.isoformat()}",
            },
            request_hash=digest({"memory_id": str(memory.id), "revision": memory.revision}),
        )
        proposed += not submission.replayed
    return proposed
