"""The transaction that applies a batch of claimed outbox entries.

Rows are locked in one order (entries, proposals, memories, each by primary
key; the receipt chain heads last), so batches on two workers never
deadlock, and a chain head is held only for the bulk append at the end.
Each entry is still re-verified on its own; what is shared is the
round-trips: one query locks the batch's proposals, one its memories, one
reads its evidence, and creates (the commonest write), receipts and
proposal outcomes are written with bulk inserts.

What every kind shares is here; each kind's own re-checks and write are its
``executor.effects.EFFECTS`` entry, handed the rows the batch already locked.
"""

import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from evidence.models import EvidenceRevision
from executor.authority import Authority, release_authorities
from executor.chain import append_receipts
from executor.dreaming import close_stale, window_member_ids, window_refusal
from executor.effects import (
    Applied,
    ApplyContext,
    Check,
    Effect,
    RegistrationState,
    Window,
    Writes,
    effect_of,
)
from executor.effects.register import lock_candidates
from executor.models import Receipt
from executor.revision_hashes import bind_memory_rows
from memory_core.embeddings import embeds
from memory_core.models import Memory
from memory_core.mutations import create_memories, write_vectors
from proposals.gates import failed_gates
from proposals.models import DreamingRun, OutboxEntry, Proposal, ProposalEvidence
from proposals.services import escalate_to_review, record_executions
from registrations.compiled import ActiveRegistration
from registrations.models import Registration
from registrations.selectors import active_registration

Outcome = Receipt.Outcome


@dataclass(frozen=True)
class _Batch:
    """Every row a batch locked or read, before any of its entries is decided."""

    entries: list[OutboxEntry]
    proposals: dict[Any, Proposal]
    runs: dict[Any, DreamingRun]
    memories: dict[Any, Memory]
    key_holders: dict[tuple[Any, str], list[Any]]
    evidence: dict[Any, list[EvidenceRevision]]
    authorities: dict[Any, Authority]
    candidates: dict[Any, Registration]
    registrations: dict[Any, ActiveRegistration]


@dataclass
class _Touched:
    """What earlier entries of this batch claimed: each memory, dedupe key and Dreaming run once."""

    memories: set[Any] = field(default_factory=set)
    keys: set[tuple[Any, str]] = field(default_factory=set)
    runs: set[Any] = field(default_factory=set)  # the next action of a run sees this one's committed receipt

    def claim(self, proposal: Proposal, memory: Memory | None) -> bool:
        """Claim what the proposal moves; False (claiming nothing) if an earlier entry holds any of it."""
        keys = {
            (proposal.tenant_id, proposal.claimed_dedupe_key),
            (proposal.tenant_id, getattr(memory, "dedupe_key", "")),
        }
        moved = {proposal.target_id, *effect_of(proposal).locked_members(proposal)}
        if moved & self.memories or keys & self.keys or proposal.dreaming_run_id in self.runs:
            return False
        if proposal.dreaming_run_id:
            self.runs.add(proposal.dreaming_run_id)
        self.memories |= moved
        self.keys |= {key for key in keys if key[1]}
        return True


@transaction.atomic(durable=True)
def apply_batch(entry_ids: list[Any], worker: dict[str, Any]) -> tuple[list[Receipt], list[Any]]:
    """Apply claimed entries exactly once; return their receipts and the ids left for the next batch.

    An entry whose memory an earlier entry of this batch already touched is
    left for the next batch, so it is verified against the committed row.
    """
    batch = _lock_batch(entry_ids)
    writes, deferred, touched = Writes(worker=worker), [], _Touched()
    for entry in batch.entries:
        proposal = batch.proposals[entry.proposal_id]
        memory = batch.memories.get(proposal.target_id)
        if memory is not None and memory.tenant_id != proposal.tenant_id:
            memory = None  # another tenant's row is, for this proposal, no memory at all
        if not touched.claim(proposal, memory):
            deferred.append(entry.pk)
            continue
        _apply_one(_context(batch, entry, memory, writes), worker)
    return _write(writes), deferred


def _lock_batch(entry_ids: list[Any]) -> _Batch:
    """Lock the entries, their proposals, Dreaming runs and memories, in that order; read the rest."""
    entries = list(
        OutboxEntry.objects.select_for_update()
        .filter(pk__in=entry_ids)
        .exclude(status__in=[OutboxEntry.Status.DONE, OutboxEntry.Status.DEAD])
        .order_by("pk")
    )
    proposals = {
        proposal.pk: proposal
        for proposal in Proposal.objects.select_for_update()
        .filter(pk__in=[entry.proposal_id for entry in entries])
        .order_by("pk")
    }
    runs = {
        run.pk: run
        for run in DreamingRun.objects.select_for_update()
        .filter(pk__in={p.dreaming_run_id for p in proposals.values() if p.dreaming_run_id})
        .order_by("pk")
    }
    wanted = _targets_and_key_holders(proposals.values()) | Q(pk__in=window_member_ids(runs))
    locked = list(Memory.objects.select_for_update().filter(wanted).order_by("pk"))
    key_holders = defaultdict(list)
    for memory in locked:
        if memory.is_active and memory.dedupe_key:
            key_holders[(memory.tenant_id, memory.dedupe_key)].append(memory.pk)
    return _Batch(
        entries=entries,
        proposals=proposals,
        runs=runs,
        memories={memory.pk: memory for memory in locked},
        key_holders=key_holders,
        evidence=_evidence_by_proposal(list(proposals)),
        authorities=release_authorities(list(proposals.values())),
        candidates=lock_candidates(proposals.values()),
        registrations={
            tenant_id: active_registration(tenant_id=tenant_id)
            for tenant_id in {proposal.tenant_id for proposal in proposals.values()}
        },
    )


def _targets_and_key_holders(proposals: Iterable[Proposal]) -> Q:
    """The rows a batch locks: its targets, what their kinds move, and the holders of the keys claimed."""
    proposals = list(proposals)
    wanted = Q(pk__in=[proposal.target_id for proposal in proposals])
    members = [member for proposal in proposals for member in effect_of(proposal).locked_members(proposal)]
    if members:
        wanted |= Q(pk__in=members)
    claimed = defaultdict(set)
    for proposal in proposals:
        if proposal.claimed_dedupe_key:
            claimed[proposal.tenant_id].add(proposal.claimed_dedupe_key)
    for tenant_id, keys in claimed.items():
        wanted |= Q(tenant_id=tenant_id, dedupe_key__in=sorted(keys), state=Memory.State.ACTIVE)
    return wanted


def _evidence_by_proposal(proposal_ids: list[Any]) -> dict[Any, list[EvidenceRevision]]:
    cited = defaultdict(list)
    links = ProposalEvidence.objects.filter(proposal_id__in=proposal_ids).select_related("evidence_revision")
    for link in links.order_by("pk"):
        cited[link.proposal_id].append(link.evidence_revision)
    return cited


def _context(batch: _Batch, entry: OutboxEntry, memory: Memory | None, writes: Writes) -> ApplyContext:
    """Hand one entry the rows the batch locked for it."""
    proposal = batch.proposals[entry.proposal_id]
    members = effect_of(proposal).locked_members(proposal)
    run = batch.runs.get(proposal.dreaming_run_id) if proposal.dreaming_run_id else None
    return ApplyContext(
        entry=entry,
        proposal=proposal,
        memory=memory,
        evidence=batch.evidence[proposal.pk],
        authority=batch.authorities[proposal.pk],
        key_holders=[
            pk
            for pk in batch.key_holders.get((proposal.tenant_id, proposal.claimed_dedupe_key), [])
            if pk != proposal.target_id
        ],
        registration=RegistrationState(
            batch.registrations[proposal.tenant_id], batch.candidates.get(proposal.target_id)
        ),
        window=Window(run, batch.memories),
        members={pk: batch.memories[pk] for pk in members if pk in batch.memories},
        writes=writes,
    )


def _apply_one(ctx: ApplyContext, worker: dict[str, Any]) -> None:
    """Decide one entry, write its effect if it applies, and queue its receipt."""
    proposal, effect = ctx.proposal, effect_of(ctx.proposal)
    before = _state(ctx.memory)
    check = _verify(ctx, effect)
    receipt_id = uuid.uuid4()
    if check.outcome == Outcome.APPLIED:
        applied = effect.apply(ctx, receipt_id)
        ctx.writes.executed.append((proposal, check.outcome, True))
    else:
        _not_applied(ctx, effect, check)
        applied = Applied(ctx.memory, effect.not_applied(ctx))
    after = _state(applied.memory)
    ctx.writes.receipts.append(
        {
            "id": receipt_id,
            "tenant_id": proposal.tenant_id,
            "proposal": proposal,
            "outbox_entry": ctx.entry,
            "outcome": check.outcome,
            "reason": check.reason,
            "memory_id": proposal.target_id,
            "before_revision": before[0],
            "before_content_hash": before[1],
            "after_revision": after[0],
            "after_content_hash": after[1],
            "action_digest": ctx.entry.action_digest,
            "evidence": proposal.evidence,
            "decision_ids": check.decision_ids,
            "effects": applied.effects,
            "policy_fingerprint": proposal.policy_fingerprint,
            "registration_version": ctx.registration.active.version,
            "executor": worker,
        }
    )


def _state(memory: Memory | None) -> tuple[int | None, str]:
    """The revision and content hash a receipt records for a memory (None and "" for none)."""
    return (memory.revision, memory.content_hash) if memory else (None, "")


def _not_applied(ctx: ApplyContext, effect: Effect, check: Check) -> None:
    """A failed gate goes back to review; a released proposal not applied records its outcome."""
    if check.outcome == Outcome.GATE_FAILED:
        escalate_to_review(ctx.proposal, failed_gates=check.reason.split(","))
    elif ctx.proposal.status == Proposal.Status.RELEASED:
        effect.release_refused(ctx)
        ctx.writes.executed.append((ctx.proposal, check.outcome, False))


def _verify(ctx: ApplyContext, effect: Effect) -> Check:
    """Re-check everything the verdict rested on; the first failure decides the outcome."""
    refusal = _check_release(ctx)
    if refusal is not None:
        return refusal
    refusal, moved_by_run = _check_window(ctx.window)
    if refusal is not None:
        return refusal
    refusal = _check_gates(ctx) or effect.verify(ctx, moved_by_run)
    return refusal or Check(Outcome.APPLIED, decision_ids=ctx.authority.decision_ids)


def _check_release(ctx: ApplyContext) -> Check | None:
    """The proposal must be released, its action as frozen, and its release allowed."""
    proposal, entry, authority = ctx.proposal, ctx.entry, ctx.authority
    if proposal.status == Proposal.Status.WITHDRAWN:
        return Check(Outcome.WITHDRAWN, "withdrawn by the agent before execution")
    if proposal.status == Proposal.Status.BLOCKED_EVIDENCE:
        return Check(Outcome.EVIDENCE_INVALID, "blocked: it cites evidence that was invalidated")
    if proposal.status != Proposal.Status.RELEASED:
        return Check(Outcome.STALE, f"proposal is {proposal.status}, not released")
    recomputed = proposal.compute_action_digest()
    if not (recomputed == proposal.action_digest == entry.action_digest):
        return Check(Outcome.DIGEST_MISMATCH, "the frozen action changed after release")
    if not authority.allowed:  # executor/authority.py: sealed verdict, valid approvals now
        return Check(authority.outcome, authority.reason)
    return None


def _check_window(window: Window) -> tuple[Check | None, frozenset[str]]:
    """A Dreaming action: its whole frozen window must still hold; also return what the run moved."""
    if window.run is None:
        return None, frozenset()
    stale, moved_by_run = window_refusal(window.run, window.memories)
    if stale:
        if not window.run.closed:
            close_stale(window.run, stale)
        return Check(Outcome.STALE, stale), moved_by_run
    return None, moved_by_run


def _check_gates(ctx: ApplyContext) -> Check | None:
    if ctx.proposal.classification != Proposal.Classification.POLICY_GATED:
        return None
    failed = failed_gates(ctx.proposal, memory=ctx.memory)
    return Check(Outcome.GATE_FAILED, ",".join(failed)) if failed else None


EMBED_REVISIONS_TASK = "executor.embed_revisions"  # sent by name: executor.tasks imports this module


def _embed(revised: list[Memory]) -> None:
    """Embed the revisions written now, or queue them for after commit (``CUSTODIAN_VECTORS``).

    Queued, a dense embedder costs the apply transaction nothing: each memory is
    applied at once and recall ranks it without the dense signal until its vector follows.
    """
    if settings.CUSTODIAN_VECTORS != "queued":
        write_vectors(revised)
        return
    if not revised or not embeds():
        return
    revisions = [[str(memory.pk), memory.revision] for memory in revised]
    transaction.on_commit(lambda: current_app.send_task(EMBED_REVISIONS_TASK, args=[revisions]))


def _write(writes: Writes) -> list[Receipt]:
    """Write what the batch decided in bulk; return its receipts, appended to the chains."""
    create_memories(writes.created)
    _embed(writes.revised)
    record_executions(writes.executed)
    bind_memory_rows(writes.receipts)
    receipts = append_receipts(writes.receipts)
    OutboxEntry.objects.filter(pk__in=[row["outbox_entry"].pk for row in writes.receipts]).update(
        status=OutboxEntry.Status.DONE, lease_expires_at=None, updated_at=timezone.now()
    )
    return receipts
