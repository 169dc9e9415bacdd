"""Proposals waiting in a queue: for a reviewer, or released for the executor.

Apart from applied memories because they stop before the executor: no
memories, no receipts, no chain.
"""

import random
import uuid
from datetime import datetime, timedelta

from django.utils import timezone

from bench.seed.rows import new
from bench.seed.world import _World
from bench.seed.writer import Progress, _write_rows, _Writer
from bench.textgen import FACTOR, PREFERENCE, TextGenerator
from evidence.models import EvidenceRevision
from proposals.models import OutboxEntry, Proposal, ProposalEvidence
from tenancy.models import Agent, Tenant

# --- the review queue --------------------------------------------------------------


def seed_pending_proposals(
    *,
    tenant: Tenant,
    agent: Agent,
    evidence: list[EvidenceRevision],
    count: int,
    text: TextGenerator,
    progress: Progress = None,
    batch: int = 5000,
) -> None:
    """Write ``count`` org factor conclusions waiting for a PM, as ``submit_proposal`` leaves them.

    Status pending_review with the real engine's verdict (risk low, medium
    or high in turn, so the risk order of ``/review/`` has something to
    sort), evidence links, created over the last three days; each review
    deadline is its creation plus the rule's window, so none is overdue.
    """
    world = _World(tenant=tenant, agent=agent, evidence=evidence, text=text)
    indices = text.reserve(count)
    now = timezone.now()
    with _Writer(_write_rows, progress) as writer:
        for offset in range(0, count, batch):
            chunk = indices[offset : offset + batch]
            writer.submit(_pending_rows(world, chunk, now=now), len(chunk))


def _pending_rows(world: _World, chunk: range, *, now: datetime) -> dict[type, list]:
    proposals, links = [], []
    for i in chunk:
        age = timedelta(seconds=random.Random(i).uniform(60, 72 * 3600))
        frozen = world.freeze(
            i,
            kind=FACTOR,
            risk_levels=("low", "medium", "high"),
            allowed=(Proposal.Classification.REVIEW_REQUIRED,),
        )
        proposal = world.proposal(
            frozen,
            status=Proposal.Status.PENDING_REVIEW,
            created_at=now - age,
            updated_at=now - age,
        )
        proposals.append(proposal)
        links.extend(world.evidence_links(proposal, frozen))
    return {Proposal: proposals, ProposalEvidence: links}


# --- a backlog for the executor ----------------------------------------------------------


def seed_released_backlog(
    *,
    tenant: Tenant,
    agent: Agent,
    evidence: list[EvidenceRevision],
    count: int,
    text: TextGenerator,
    progress: Progress = None,
    batch: int = 5000,
) -> list[uuid.UUID]:
    """Write ``count`` released auto-apply proposals with a pending outbox entry each; return the entry ids.

    Exactly what ``release`` writes (user preferences the user asked for,
    due now) but no broker message: the executor's sweep finds them, so a
    benchmark can time how fast the executor drains a backlog.
    """
    world = _World(tenant=tenant, agent=agent, evidence=evidence, text=text)
    indices = text.reserve(count)
    entry_ids: list[uuid.UUID] = []
    with _Writer(_write_rows, progress) as writer:
        for offset in range(0, count, batch):
            chunk = indices[offset : offset + batch]
            rows = _backlog_rows(world, chunk, now=timezone.now())
            entry_ids.extend(entry.pk for entry in rows[OutboxEntry])
            writer.submit(rows, len(chunk))
    return entry_ids


def _backlog_rows(world: _World, chunk: range, *, now: datetime) -> dict[type, list]:
    proposals, links, entries = [], [], []
    for i in chunk:
        frozen = world.freeze(
            i, kind=PREFERENCE, risk_levels=("low",), allowed=(Proposal.Classification.AUTO_APPLY,)
        )
        proposal = world.proposal(
            frozen,
            status=Proposal.Status.RELEASED,
            created_at=now,
            updated_at=now,
        )
        proposals.append(proposal)
        links.extend(world.evidence_links(proposal, frozen))
        entries.append(
            new(
                OutboxEntry,
                id=world.new_id(),
                tenant_id=world.tenant.pk,
                proposal_id=proposal.pk,
                action_digest=proposal.action_digest,
                status=OutboxEntry.Status.PENDING,
                attempts=0,
                available_at=now + timedelta(seconds=frozen.verdict.hold_seconds),
                created_at=now,
                updated_at=now,
            )
        )
    return {Proposal: proposals, ProposalEvidence: links, OutboxEntry: entries}
