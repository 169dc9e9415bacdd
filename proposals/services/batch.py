"""Submitting many proposals at once: the single-submit steps, with the writes done in bulk.

Each proposal is frozen and classified exactly as ``create_proposal`` does it
(policy verdict, fingerprint, seal; all under the registration active when
the batch began), then the batch writes its proposals,
their history rows, evidence links and outbox rows with one INSERT per table,
all in one transaction: a proposal is never stored without its outbox row.
An item refused before any write (a stale base revision, invalid content)
is reported in its place. If the bulk transaction fails in the database (a
concurrent request took a key, a value storage refuses), nothing of it is
kept and every item is submitted again on its own, so each gets its own answer.
"""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction

from core.errors import DomainError
from evidence.models import EvidenceRevision
from proposals.errors import IdempotencyConflict
from proposals.kinds.create import claimed_key
from proposals.models import Proposal
from proposals.payloads import ProposalPayload
from proposals.policy import Verdict
from proposals.selectors import PolicyReads
from proposals.services.freezing import STATUS_FOR_VERDICT, freeze_and_classify
from proposals.services.submission import Submission, submit_proposal, write_new_proposals
from registrations.selectors import active_registration
from tenancy.models import Agent

ItemOutcome = Submission | DomainError | ValidationError


@dataclass(frozen=True)
class BatchItem:
    idempotency_key: str
    payload: ProposalPayload
    request_hash: str


def submit_proposals(*, agent: Agent, items: list[BatchItem]) -> list[ItemOutcome]:
    """Submit ``items`` in order; return, per item, its ``Submission`` or the error refusing it.

    Keys replay and conflict as in ``submit_proposal``, across batches and single submits, and
    within the batch (a key repeated later in the same batch is a replay of its first use).
    """
    try:
        return _submit_in_bulk(agent, items)
    except DatabaseError:
        return [_submit_alone(agent, item) for item in items]


def _submit_alone(agent: Agent, item: BatchItem) -> ItemOutcome:
    try:
        return submit_proposal(
            agent=agent,
            idempotency_key=item.idempotency_key,
            payload=item.payload,
            request_hash=item.request_hash,
        )
    except (DomainError, ValidationError) as exc:
        return exc


@transaction.atomic(durable=True)
def _submit_in_bulk(agent: Agent, items: list[BatchItem]) -> list[ItemOutcome]:
    known = {
        proposal.idempotency_key: proposal
        for proposal in Proposal.objects.filter(
            submitted_by=agent, idempotency_key__in={item.idempotency_key for item in items}
        )
    }
    outcomes: list[ItemOutcome] = []
    created: list[tuple[Proposal, list[EvidenceRevision], Verdict]] = []
    registration = active_registration(tenant_id=agent.tenant_id)  # one for the whole batch
    reads = PolicyReads(agent)  # every item's delegations and evidence: two queries for the batch
    fresh = [item.payload for item in items if item.idempotency_key not in known]
    reads.load(
        subjects=[(payload.get("policy_context") or {}).get("acting_for_subject") for payload in fresh],
        bindings=[
            binding
            for payload in fresh
            if payload["action"] != Proposal.Action.COMPACT
            for binding in payload.get("evidence", [])
        ],
    )
    reads.load_key_holders(
        claimed_key(payload["memory"]) for payload in fresh if payload["action"] == Proposal.Action.CREATE
    )
    for item in items:
        existing = known.get(item.idempotency_key)
        if existing is not None:
            existing.submitted_by = agent  # keys are per agent: the output names it without a query
            replayed = existing.request_hash == item.request_hash
            outcomes.append(
                Submission(existing, replayed=True)
                if replayed
                else IdempotencyConflict(proposal_id=str(existing.id))
            )
            continue
        proposal = Proposal(
            tenant_id=agent.tenant_id,
            submitted_by=agent,
            action=item.payload["action"],
            idempotency_key=item.idempotency_key,
            request_hash=item.request_hash,
        )
        try:
            verdict, revisions = freeze_and_classify(
                proposal, agent, item.payload, registration=registration, reads=reads
            )
        except (DomainError, ValidationError) as exc:
            outcomes.append(exc)
            continue
        proposal.status = STATUS_FOR_VERDICT[verdict.classification]
        known[item.idempotency_key] = proposal
        created.append((proposal, revisions, verdict))
        outcomes.append(Submission(proposal, replayed=False))
    write_new_proposals(agent, created)
    return outcomes
