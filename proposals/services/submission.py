"""Submission: the only way a proposal comes to exist, and how an agent amends or withdraws it.

A submission writes no memory: it freezes the action, asks the policy engine
for a verdict, and, when the verdict lets the action run, releases it to the
executor in the same transaction.
"""

import functools
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import DomainError
from core.history import history_model, history_statement
from core.inserts import insert_statement, run_together
from core.signals import proposals_submitted
from evidence.models import EvidenceRevision
from proposals.errors import (
    AmendmentChangesTarget,
    IdempotencyConflict,
    NotSubmitter,
)
from proposals.models import InvalidProposalTransition, OutboxEntry, Proposal, ProposalEvidence
from proposals.payloads import ProposalPayload
from proposals.policy import Verdict
from proposals.selectors import proposal_by_idempotency_key
from proposals.services.freezing import STATUS_FOR_VERDICT, freeze_and_classify
from proposals.services.notices import announce_pending
from proposals.services.outbox import nudge, release
from telemetry.context import trace_context
from tenancy.models import Agent


@dataclass(frozen=True)
class Submission:
    """The outcome of ``submit_proposal``: the proposal and whether it was a replay."""

    proposal: Proposal
    replayed: bool


def submit_proposal(
    *, agent: Agent, idempotency_key: str, payload: ProposalPayload, request_hash: str
) -> Submission:
    """Freeze, classify and store a proposal; release it if policy allows.

    The same ``idempotency_key`` with the same ``request_hash`` returns the
    original proposal; with another hash it raises ``IdempotencyConflict``.
    A new key (the common case) costs no lookup: the key is read only when the
    submission fails, by the unique constraint on (tenant, agent, key) for a
    replay or a concurrent twin, or by a refusal a replay must not get (its
    base revision went stale since the original was accepted).
    """
    try:
        proposal = _submit(
            agent=agent, idempotency_key=idempotency_key, payload=payload, request_hash=request_hash
        )
    except (IntegrityError, DomainError, ValidationError):
        existing = _existing_submission(agent, idempotency_key, request_hash)
        if existing is None:
            raise
        return Submission(existing, replayed=True)
    return Submission(proposal, replayed=False)


def _existing_submission(agent: Agent, idempotency_key: str, request_hash: str) -> Proposal | None:
    proposal = proposal_by_idempotency_key(agent=agent, idempotency_key=idempotency_key)
    if proposal is not None and proposal.request_hash != request_hash:
        raise IdempotencyConflict(proposal_id=str(proposal.id))
    return proposal


@transaction.atomic(durable=True)
def _submit(*, agent: Agent, idempotency_key: str, payload: ProposalPayload, request_hash: str) -> Proposal:
    return create_proposal(
        agent=agent, idempotency_key=idempotency_key, payload=payload, request_hash=request_hash
    )


def create_proposal(
    *, agent: Agent, idempotency_key: str, payload: ProposalPayload, request_hash: str
) -> Proposal:
    """Freeze, classify, store and maybe release one proposal (inside the caller's transaction)."""
    proposal = Proposal(
        tenant_id=agent.tenant_id,
        submitted_by=agent,
        action=payload["action"],
        idempotency_key=idempotency_key,
        request_hash=request_hash,
    )
    verdict, revisions = freeze_and_classify(proposal, agent, payload)
    proposal.status = STATUS_FOR_VERDICT[verdict.classification]
    write_new_proposals(agent, [(proposal, revisions, verdict)])
    return proposal


def write_new_proposals(
    agent: Agent, created: list[tuple[Proposal, list[EvidenceRevision], Verdict]]
) -> None:
    """Insert frozen proposals, their history rows, evidence links and outbox rows: one INSERT per table.

    In the caller's transaction, so a released proposal is never stored without its outbox row;
    on PostgreSQL the four INSERTs go as one statement (``core.inserts.run_together``). The
    history rows are those a save() would record (same columns, date and user), copied from
    the inserted rows by the database instead of built in Python.
    """
    if not created:
        return
    proposals = [proposal for proposal, _, _ in created]
    for index, proposal in enumerate(proposals):  # the order the client sent them in
        proposal.submission_index = index
    now = timezone.now()
    links = [
        ProposalEvidence(tenant_id=agent.tenant_id, proposal=proposal, evidence_revision=revision)
        for proposal, revisions, _ in created
        for revision in revisions
    ]
    context = trace_context()  # one request wrote them all
    entries = [
        OutboxEntry(
            tenant_id=proposal.tenant_id,
            proposal=proposal,
            action_digest=proposal.action_digest,
            available_at=now + timedelta(seconds=verdict.rule.hold_seconds),
            trace_context=context,
        )
        for proposal, _, verdict in created
        if proposal.status == Proposal.Status.RELEASED
    ]
    run_together(
        [
            insert_statement(proposals, name="proposal", returning="*"),
            history_statement(
                Proposal,
                [proposal.pk for proposal in proposals],
                history_type="+",
                when=now,
                user_id=_history_user_id(proposals[0]),
                inserted_by="proposal",
            ),
            *([insert_statement(links)] if links else []),
            *([insert_statement(entries)] if entries else []),
        ]
    )
    announce_pending(proposals)
    # A nudged worker takes up to CUSTODIAN_EXECUTOR_BATCH due entries with it: one nudge per
    # that many due entries starts them all; the sweep dispatches whatever a lost nudge missed.
    due = [entry.id for entry in entries if entry.available_at <= now]
    for entry_id in due[:: settings.CUSTODIAN_EXECUTOR_BATCH]:
        transaction.on_commit(functools.partial(nudge, entry_id))
    verdicts = [(proposal.classification, proposal.matched_rule) for proposal in proposals]
    transaction.on_commit(functools.partial(_announce_submitted, verdicts))


def _announce_submitted(verdicts: list[tuple[str, str]]) -> None:
    proposals_submitted.send(sender=Proposal, verdicts=verdicts)


def _history_user_id(proposal: Proposal) -> Any:
    """The person simple-history would record for this request (none for an agent's)."""
    user = history_model(Proposal).get_default_history_user(proposal)  # type: ignore[attr-defined]
    return user.pk if user else None


@transaction.atomic(durable=True)
def amend_proposal(*, agent: Agent, proposal: Proposal, payload: ProposalPayload) -> Proposal:
    """Replace a proposal's action after a reviewer asked for changes, and classify it afresh.

    The proposal keeps its id and target; its digest changes, so every
    decision on the old digest is stale. History keeps the old version. The
    amendment routes to the same path as the one that asked for changes, or
    a stricter one: it goes back to the reviewers, never around them.
    """
    proposal = Proposal.objects.select_for_update().get(pk=proposal.pk, tenant_id=agent.tenant_id)
    if proposal.submitted_by_id != agent.id:
        raise NotSubmitter()
    if proposal.status != Proposal.Status.CHANGES_REQUESTED:
        raise InvalidProposalTransition(
            f"Only proposals with changes requested can be amended, not {proposal.status}"
        )
    if payload["action"] != proposal.action or (
        proposal.action == Proposal.Action.UPDATE and payload["memory_id"] != proposal.target_id
    ):
        raise AmendmentChangesTarget()
    asked = (proposal.classification, proposal.required_approvals, proposal.review_deadline)
    verdict, revisions = freeze_and_classify(proposal, agent, payload, reviewed_path=asked)
    proposal.transition_to(STATUS_FOR_VERDICT[Proposal.Classification(proposal.classification)])
    proposal.version += 1
    proposal.save()
    proposal.evidence_links.all().delete()
    _link_evidence(proposal, revisions)
    release_if_allowed(proposal, verdict)
    announce_pending([proposal])
    return proposal


def _link_evidence(proposal: Proposal, revisions: list[EvidenceRevision]) -> None:
    ProposalEvidence.objects.bulk_create(
        ProposalEvidence(tenant_id=proposal.tenant_id, proposal=proposal, evidence_revision=revision)
        for revision in revisions
    )


def release_if_allowed(proposal: Proposal, verdict: Verdict) -> None:
    if proposal.status == Proposal.Status.RELEASED:
        release(proposal, available_at=timezone.now() + timedelta(seconds=verdict.rule.hold_seconds))


@transaction.atomic(durable=True)
def withdraw_proposal(*, agent: Agent, proposal: Proposal) -> Proposal:
    """Withdraw an open proposal of this agent's; a released one then executes as a no-op.

    Only the submitter withdraws, as only the submitter amends: another agent
    of the tenant could otherwise cancel changes it merely disagrees with.
    """
    proposal = Proposal.objects.select_for_update().get(pk=proposal.pk, tenant_id=agent.tenant_id)
    if proposal.submitted_by_id != agent.id:
        raise NotSubmitter("Only the agent that submitted a proposal may withdraw it")
    proposal.transition_to(Proposal.Status.WITHDRAWN)
    proposal.save(update_fields=["status", "updated_at"])
    return proposal
