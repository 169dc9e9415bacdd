"""The executor owns the outbox, the only writes to memories, and receipts.

Delivery is at least once (Celery with late acks plus the sweep); the effect
is exactly once because applying an entry is one transaction that locks the
entry, returns early if it is already done, and finishes by marking it done
next to its receipt (``UNIQUE(receipt.outbox_entry)`` is the backstop).
"""

import logging
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from evidence.models import EvidenceRevision
from executor.chain import append_receipt
from executor.models import OutboxEntry, Receipt
from memory_core.lifecycle import InvalidTransition, next_state
from memory_core.models import Memory
from memory_core.mutations import change_state, create_memory, purge_memory, update_memory
from proposals.gates import failed_gates
from proposals.models import Proposal
from proposals.services import escalate_to_review, record_execution, scrub_purged_content
from reviews.selectors import approving_decisions, has_veto

logger = logging.getLogger(__name__)
Outcome = Receipt.Outcome


@dataclass(frozen=True)
class Check:
    outcome: str
    reason: str = ""
    decision_ids: list[str] = field(default_factory=list)


def apply_entry(*, entry_id: Any, executor: dict[str, Any]) -> Receipt | None:
    """Apply one outbox entry exactly once; return its receipt (None if dead or unknown)."""
    if not _claim(entry_id):
        return Receipt.objects.filter(outbox_entry_id=entry_id).first()
    return _apply(entry_id, executor)


@transaction.atomic(durable=True)
def _claim(entry_id: Any) -> bool:
    """Count the attempt in its own committed transaction; dead-letter past the cap."""
    # skip_locked: a copy of a message whose entry another worker holds right
    # now returns at once instead of queueing behind it.
    entry = OutboxEntry.objects.select_for_update(skip_locked=True).filter(pk=entry_id).first()
    if entry is None or entry.is_finished:
        return False
    now = timezone.now()
    if entry.attempts >= settings.CUSTODIAN_OUTBOX_MAX_ATTEMPTS:
        entry.status = OutboxEntry.Status.DEAD
        entry.lease_expires_at = None
        entry.save(update_fields=["status", "lease_expires_at", "updated_at"])
        logger.error("outbox entry %s dead-lettered after %s attempts", entry.id, entry.attempts)
        return False
    if entry.requeued_from_id:
        # Here, not in the apply step: the receipt must survive a successor that fails too.
        _close_requeued_predecessor(entry, Proposal.objects.get(pk=entry.proposal_id))
    entry.attempts += 1
    entry.status = OutboxEntry.Status.DISPATCHED
    entry.lease_expires_at = now + timedelta(seconds=settings.CUSTODIAN_OUTBOX_LEASE_SECONDS)
    entry.save(update_fields=["attempts", "status", "lease_expires_at", "updated_at"])
    return True


@transaction.atomic(durable=True)
def _apply(entry_id: Any, executor: dict[str, Any]) -> Receipt:
    entry = OutboxEntry.objects.select_for_update().get(pk=entry_id)
    if entry.status == OutboxEntry.Status.DONE:
        return entry.receipt
    proposal = Proposal.objects.select_for_update().get(pk=entry.proposal_id)
    memory = (
        Memory.objects.select_for_update()
        .filter(tenant_id=proposal.tenant_id, pk=proposal.target_memory_id)
        .first()
    )
    before = (memory.revision, memory.content_hash) if memory else (None, "")
    check = _verify(entry, proposal, memory)
    receipt_id = uuid.uuid4()
    effects: dict = {}
    if check.outcome == Outcome.APPLIED:
        memory, effects = _write(proposal, memory, change_reason=f"receipt:{receipt_id}")
        record_execution(proposal, outcome=check.outcome, applied=True)
    elif check.outcome == Outcome.GATE_FAILED:
        escalate_to_review(proposal, failed_gates=check.reason.split(","))
    elif proposal.status == Proposal.Status.RELEASED:
        record_execution(proposal, outcome=check.outcome, applied=False)
    after = (memory.revision, memory.content_hash) if memory else (None, "")
    receipt = append_receipt(
        id=receipt_id,
        tenant_id=proposal.tenant_id,
        proposal=proposal,
        outbox_entry=entry,
        outcome=check.outcome,
        reason=check.reason,
        memory_id=proposal.target_memory_id,
        before_revision=before[0],
        before_content_hash=before[1],
        after_revision=after[0],
        after_content_hash=after[1],
        action_digest=entry.action_digest,
        evidence=proposal.evidence,
        decision_ids=check.decision_ids,
        effects=effects,
        policy_fingerprint=proposal.policy_fingerprint,
        executor=executor,
    )
    entry.status = OutboxEntry.Status.DONE
    entry.lease_expires_at = None
    entry.save(update_fields=["status", "lease_expires_at", "updated_at"])
    return receipt


def _verify(entry: OutboxEntry, proposal: Proposal, memory: Memory | None) -> Check:
    """Re-check everything the verdict rested on; the first failure decides the outcome."""
    if proposal.status == Proposal.Status.WITHDRAWN:
        return Check(Outcome.WITHDRAWN, "withdrawn by the agent before execution")
    if proposal.status == Proposal.Status.BLOCKED_EVIDENCE:
        return Check(Outcome.EVIDENCE_INVALID, "blocked: it cites evidence that was invalidated")
    if proposal.status != Proposal.Status.RELEASED:
        return Check(Outcome.STALE, f"proposal is {proposal.status}, not released")
    recomputed = proposal.compute_action_digest()
    if not (recomputed == proposal.action_digest == entry.action_digest):
        return Check(Outcome.DIGEST_MISMATCH, "the frozen action changed after release")
    decision_ids: list[str] = []
    if proposal.classification == Proposal.Classification.POLICY_GATED:
        failed = failed_gates(proposal, memory=memory)
        if failed:
            return Check(Outcome.GATE_FAILED, ",".join(failed))
    elif proposal.classification == Proposal.Classification.REVIEW_REQUIRED:
        if has_veto(proposal):
            return Check(Outcome.APPROVALS_MISSING, "vetoed by a reject on the current digest")
        approvals = approving_decisions(proposal)
        if len(approvals) < proposal.required_approvals:
            return Check(
                Outcome.APPROVALS_MISSING,
                f"{len(approvals)} of {proposal.required_approvals} approvals on the current digest",
            )
        decision_ids = [str(decision.id) for decision in approvals]
    refusal = _check_evidence(proposal) or _check_target(proposal, memory)
    return refusal or Check(Outcome.APPLIED, decision_ids=decision_ids)


def _check_evidence(proposal: Proposal) -> Check | None:
    invalid = (
        EvidenceRevision.objects.filter(proposal_links__proposal=proposal)
        .exclude(status=EvidenceRevision.Status.VALID)
        .first()
    )
    if invalid is None:
        return None
    return Check(
        Outcome.EVIDENCE_INVALID, f"evidence {invalid.source_id}@{invalid.revision} is {invalid.status}"
    )


def _check_target(proposal: Proposal, memory: Memory | None) -> Check | None:
    """Compare-and-swap: the memory must be exactly where the proposal left it."""
    if proposal.action == Proposal.Action.CREATE:
        return Check(Outcome.STALE, "memory already exists") if memory is not None else None
    if memory is None:
        return Check(Outcome.STALE, "memory no longer exists")
    if memory.revision != proposal.base_revision:
        return Check(Outcome.STALE, f"base revision {proposal.base_revision}, memory is at {memory.revision}")
    if proposal.is_lifecycle:
        try:
            next_state(memory.state, proposal.action)
        except InvalidTransition as refusal:
            return Check(Outcome.STALE, refusal.detail)
    elif proposal.action == Proposal.Action.FENCE:
        return None  # a fence records a fact about any memory that still exists
    elif not memory.is_active:
        return Check(Outcome.STALE, f"memory is {memory.state}")
    return None


def _write(proposal: Proposal, memory: Memory | None, *, change_reason: str) -> tuple[Memory | None, dict]:
    """Apply the frozen action; return the memory as it now is (None once purged) and the effects."""
    now = timezone.now()
    if proposal.action == Proposal.Action.PURGE:
        removed = purge_memory(memory=memory)
        removed.update(
            scrub_purged_content(tenant_id=proposal.tenant_id, memory_id=proposal.target_memory_id)
        )
        return None, {"purged": removed}
    if proposal.action == Proposal.Action.FENCE:
        return memory, {"fenced": proposal.fields["reason"]}
    if proposal.is_lifecycle:
        memory = change_state(
            memory=memory,
            verb=proposal.action,
            reason=proposal.fields["reason"],
            now=now,
            change_reason=change_reason,
        )
        return memory, {}
    evidence = [
        link.evidence_revision for link in proposal.evidence_links.select_related("evidence_revision")
    ]
    if proposal.action == Proposal.Action.CREATE:
        memory = create_memory(
            memory_id=proposal.target_memory_id,
            tenant_id=proposal.tenant_id,
            fields=proposal.fields,
            evidence=evidence,
            now=now,
            change_reason=change_reason,
        )
        return memory, {}
    if proposal.action == Proposal.Action.REVALIDATE:
        memory = update_memory(
            memory=memory, changes={}, evidence=evidence, now=now, change_reason=change_reason
        )
        return memory, {"unfenced": proposal.fields["reason"]}
    memory = update_memory(
        memory=memory, changes=proposal.fields, evidence=evidence, now=now, change_reason=change_reason
    )
    return memory, {}


@transaction.atomic(durable=True)
def record_attempt_failure(*, entry_id: Any, error: str) -> None:
    """Put a failed entry back for the sweep, after a capped exponential backoff."""
    entry = OutboxEntry.objects.select_for_update().filter(pk=entry_id).first()
    if entry is None or entry.is_finished:
        return
    delay = min(2**entry.attempts, 300)
    entry.status = OutboxEntry.Status.PENDING
    entry.available_at = timezone.now() + timedelta(seconds=delay)
    entry.lease_expires_at = None
    entry.last_error = error[:4000]
    entry.save(update_fields=["status", "available_at", "lease_expires_at", "last_error", "updated_at"])


@transaction.atomic(durable=True)
def lease_due_entries(*, limit: int) -> list[Any]:
    """Lease due entries (pending and ready, or dispatched with an expired lease); return their ids.

    ``skip_locked`` lets several sweeps, and workers holding entries, run
    side by side without waiting on each other.
    """
    now = timezone.now()
    due = (
        OutboxEntry.objects.select_for_update(skip_locked=True)
        .filter(
            Q(status=OutboxEntry.Status.PENDING, available_at__lte=now)
            | Q(status=OutboxEntry.Status.DISPATCHED, lease_expires_at__lt=now)
        )
        .order_by("available_at")
        .values_list("id", flat=True)[:limit]
    )
    ids = list(due)
    OutboxEntry.objects.filter(pk__in=ids).update(
        status=OutboxEntry.Status.DISPATCHED,
        lease_expires_at=now + timedelta(seconds=settings.CUSTODIAN_OUTBOX_LEASE_SECONDS),
        updated_at=now,
    )
    return ids


@transaction.atomic(durable=True)
def requeue_dead_entry(*, entry: OutboxEntry, requested_by: str) -> OutboxEntry:
    """Give a dead-lettered entry a fresh successor (run from the admin, as the web role).

    Only an outbox row is written here; the executor writes the dead entry's
    ``requeued`` receipt when it takes the successor, so the web role never
    needs to write receipts.
    """
    entry = OutboxEntry.objects.select_for_update().get(pk=entry.pk)
    if entry.status != OutboxEntry.Status.DEAD or OutboxEntry.objects.filter(requeued_from=entry).exists():
        raise ValueError(f"Entry {entry.id} is {entry.status}; only a dead entry can be requeued, once")
    successor = OutboxEntry.objects.create(
        tenant_id=entry.tenant_id,
        proposal_id=entry.proposal_id,
        action_digest=entry.action_digest,
        available_at=timezone.now(),
        requeued_from=entry,
        requested_by=requested_by,
    )
    from executor.receivers import nudge

    transaction.on_commit(lambda: nudge(successor.id))
    return successor


def _close_requeued_predecessor(entry: OutboxEntry, proposal: Proposal) -> None:
    """Write the ``requeued`` receipt of the dead entry this one replaces (once)."""
    dead = OutboxEntry.objects.select_for_update().get(pk=entry.requeued_from_id)
    if dead.status == OutboxEntry.Status.DONE:
        return
    append_receipt(
        tenant_id=dead.tenant_id,
        proposal=proposal,
        outbox_entry=dead,
        outcome=Outcome.REQUEUED,
        reason=f"requeued by {entry.requested_by} as {entry.id} after: {dead.last_error[:500]}",
        memory_id=proposal.target_memory_id,
        action_digest=dead.action_digest,
        evidence=proposal.evidence,
        policy_fingerprint=proposal.policy_fingerprint,
        executor={"requested_by": entry.requested_by},
    )
    dead.status = OutboxEntry.Status.DONE
    dead.save(update_fields=["status", "updated_at"])
