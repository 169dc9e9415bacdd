"""The world after many applied proposals: every row the submit, review and apply path writes.

Apart because it is most of the rows and all of the receipt chain; the
floor builds its rows here too.
"""

import functools
import os
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from bench.seed.rows import _copy_all, new
from bench.seed.world import _World
from bench.seed.writer import Progress, _chain_receipts, _lock_chain, _Writer
from bench.textgen import TextGenerator
from evidence.models import EvidenceRevision
from executor.models import Receipt
from executor.revision_hashes import MEMORY_COLUMNS, memory_hash
from memory_core.models import Memory, MemoryEvidence
from memory_core.mutations import new_memory
from proposals.models import OutboxEntry, Proposal, ProposalEvidence
from reviews.models import ReviewDecision
from tenancy.models import Agent, Tenant

HistoricalMemory = Memory.history.model
HistoricalDecision = ReviewDecision.history.model
HISTORY = {Memory: HistoricalMemory, ReviewDecision: HistoricalDecision}  # model.history builds a manager
_NONE, _NOTHING = [], {}  # shared empty decision_ids and effects: encoded once per batch, never mutated
EXECUTOR = {"host": "bench-seed", "pid": os.getpid()}
# The models one applied memory writes, in foreign-key order.
APPLIED_MODELS = (
    Proposal,
    ProposalEvidence,
    ReviewDecision,
    HistoricalDecision,
    OutboxEntry,
    Memory,
    HistoricalMemory,
    MemoryEvidence,
    Receipt,
)


def seed_applied_memories(
    *,
    tenant: Tenant,
    agent: Agent,
    evidence: list[EvidenceRevision],
    count: int,
    text: TextGenerator,
    progress: Progress = None,
    batch: int = 5000,
) -> None:
    """Write ``count`` memories as if their create proposals had been submitted and applied.

    The mix comes from ``text`` (half org factor conclusions, 30 % user
    preferences, 20 % episodic events). Each gets what the real path writes:
    the proposal (status applied, the real engine's verdict: preferences
    auto_apply, events policy_gated, factor conclusions review_required),
    its evidence links, the approvals a review_required proposal needed
    (by ``bench-reviewer-N`` users, with their history rows), a done outbox
    entry, the memory at revision 1 with its ``+`` history row and evidence
    links, and an applied receipt. Each batch is one transaction that locks
    the tenant's chain head, appends its receipts after it and moves it, so
    an interrupted seed leaves a chain that verifies and executors may run
    meanwhile. Timestamps run up to now, after the tenant's last receipt.
    """
    world = _World(tenant=tenant, agent=agent, evidence=evidence, text=text)
    indices = text.reserve(count)
    now = timezone.now()
    last = Receipt.objects.filter(tenant=tenant).order_by("-seq").values_list("created_at", flat=True).first()
    step = timedelta(milliseconds=200)
    if last is not None and now - count * step <= last:
        step = (now - last) / (count + 1)
    start = now - count * step
    with _Writer(functools.partial(_write_applied, world), progress) as writer:
        for offset in range(0, count, batch):
            chunk = indices[offset : offset + batch]
            rows = _applied_rows(world, chunk, first_at=start + (offset + 1) * step, step=step)
            writer.submit(rows, len(chunk))


@transaction.atomic(durable=True)
def _write_applied(world: _World, rows: dict[type, list]) -> None:
    chain = _lock_chain(world.tenant.pk)
    _chain_receipts(rows[Receipt], chain)
    _copy_all(rows)
    chain.save(update_fields=["seq", "head_hash"])


def _applied_rows(world: _World, chunk: range, *, first_at: datetime, step: timedelta) -> dict[type, list]:
    """Build every row of ``chunk``'s applied memories; receipts get their place in the chain later."""
    rows: dict[type, list] = {model: [] for model in APPLIED_MODELS}
    tenant_id = world.tenant.pk
    for k, i in enumerate(chunk):
        applied_at = first_at + k * step
        frozen = world.freeze(
            i,
            kind=None,
            risk_levels=("low", "medium"),
            allowed=(
                Proposal.Classification.AUTO_APPLY,
                Proposal.Classification.POLICY_GATED,
                Proposal.Classification.REVIEW_REQUIRED,
            ),
        )
        verdict = frozen.verdict
        reviewed = verdict.classification == Proposal.Classification.REVIEW_REQUIRED
        if reviewed:  # submitted two hours earlier, approved a second before it was applied
            created_at, released_at = applied_at - timedelta(hours=2), applied_at - timedelta(seconds=1)
        else:
            created_at = applied_at - timedelta(milliseconds=250)
            released_at = created_at + timedelta(seconds=verdict.hold_seconds)
        proposal = world.proposal(
            frozen,
            status=Proposal.Status.APPLIED,
            outcome=Receipt.Outcome.APPLIED,
            created_at=created_at,
            updated_at=applied_at,
        )
        rows[Proposal].append(proposal)
        rows[ProposalEvidence].extend(world.evidence_links(proposal, frozen))
        decisions = []
        for reviewer in world.approvers(verdict.required_approvals) if reviewed else []:
            decision = new(
                ReviewDecision,
                id=world.new_id(),
                tenant_id=tenant_id,
                proposal_id=proposal.pk,
                actor_id=reviewer.pk,
                represented_owner="quant-desk",
                decision=ReviewDecision.Decision.APPROVE,
                reason="checked against the cited backtest",
                action_digest=proposal.action_digest,
                proposal_version=proposal.version,
                policy_fingerprint=proposal.policy_fingerprint,
                channel=ReviewDecision.Channel.UI,
                created_at=released_at,
            )
            decisions.append(decision)
            rows[ReviewDecision].append(decision)
            rows[HistoricalDecision].append(_history_row(decision, at=released_at, user_id=reviewer.pk))
        entry = new(
            OutboxEntry,
            id=world.new_id(),
            tenant_id=tenant_id,
            proposal_id=proposal.pk,
            action_digest=proposal.action_digest,
            status=OutboxEntry.Status.DONE,
            attempts=1,
            available_at=released_at,
            created_at=released_at,
            updated_at=applied_at,
        )
        rows[OutboxEntry].append(entry)
        receipt_id = world.new_id()
        memory = new_memory(  # the executor's own builder
            memory_id=proposal.target_id,
            tenant_id=tenant_id,
            fields=frozen.fields,
            now=applied_at,
            submitted=(proposal.created_at, proposal.submission_index),
        )
        memory.state = Memory.State.ACTIVE.value  # the default as a plain string (same row, faster hash)
        rows[Memory].append(memory)
        rows[HistoricalMemory].append(_history_row(memory, at=applied_at, reason=f"receipt:{receipt_id}"))
        rows[MemoryEvidence].extend(
            new(
                MemoryEvidence,
                tenant_id=tenant_id,
                memory_id=memory.pk,
                memory_revision=1,
                evidence_revision_id=revision.pk,
                content_hash=revision.content_hash,
            )
            for revision in frozen.revisions
        )
        receipt = new(
            Receipt,
            id=receipt_id,
            tenant_id=tenant_id,
            proposal_id=proposal.pk,
            outbox_entry_id=entry.pk,
            outcome=Receipt.Outcome.APPLIED.value,
            reason="",
            memory_id=memory.pk,
            before_revision=None,
            after_revision=1,
            before_content_hash="",
            after_content_hash=memory.content_hash,
            after_memory_hash=memory_hash(
                [memory.__dict__[column] for column in MEMORY_COLUMNS],
                [(revision.pk, revision.content_hash) for revision in frozen.revisions],
            ),
            action_digest=entry.action_digest,
            evidence=proposal.evidence,
            decision_ids=[str(decision.pk) for decision in decisions] if decisions else _NONE,
            effects=_NOTHING,
            policy_fingerprint=proposal.policy_fingerprint,
            executor={**EXECUTOR, "task_id": str(entry.pk)},
            created_at=applied_at,
        )
        rows[Receipt].append(receipt)
    return rows


def _history_row(instance, *, at: datetime, reason: str | None = None, user_id=None):
    """Return the ``+`` row simple-history writes when ``instance`` is created."""
    model = type(instance)
    history_model = HISTORY[model]
    values = instance.__dict__
    return new(
        history_model,
        **{name: values[name] for name in _shared_attnames(history_model, model)},
        history_date=at,
        history_change_reason=reason,
        history_type="+",
        history_user_id=user_id,
    )


@functools.cache
def _shared_attnames(history_model, model) -> tuple[str, ...]:
    own = {f.attname for f in history_model._meta.concrete_fields}
    return tuple(f.attname for f in model._meta.concrete_fields if f.attname in own)
