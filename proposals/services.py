"""Proposals own submission, classification and the proposal state machine.

``submit_proposal`` is the only way a proposal comes to exist. It writes no
memory: it freezes the action, asks the policy engine for a verdict, and,
when the verdict lets the action run, releases it to the executor in the
same transaction.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from core.canonical import digest
from evidence.models import EvidenceRevision
from evidence.selectors import revisions_for_bindings
from memory_core.content import validate_content, validate_retention
from memory_core.lifecycle import next_state
from memory_core.models import Memory, MemoryEvidence
from memory_core.selectors import active_memories_with_dedupe_key
from proposals.errors import (
    AmendmentChangesTarget,
    BaseRevisionStale,
    ExecutorNotListening,
    IdempotencyConflict,
    NotSubmitter,
)
from proposals.models import InvalidProposalTransition, Proposal, ProposalEvidence
from proposals.policy import Verdict, active_rule_set, classify
from proposals.signals import proposal_released
from tenancy.models import Agent
from tenancy.services import bind_policy_context, system_agent

# Evidence statuses from best to worst; a proposal's evidence fact is its worst binding.
_EVIDENCE_SEVERITY = ["valid", "superseded", "invalidated", "mismatch", "unknown"]
_DATETIME_FIELDS = ("expires_at", "valid_from", "valid_to")
_STATUS_FOR_VERDICT = {
    Proposal.Classification.AUTO_APPLY: Proposal.Status.RELEASED,
    Proposal.Classification.POLICY_GATED: Proposal.Status.RELEASED,
    Proposal.Classification.REVIEW_REQUIRED: Proposal.Status.PENDING_REVIEW,
    Proposal.Classification.DENIED: Proposal.Status.DENIED,
}
_MEMORY_DEFAULTS = {
    "sensitivity": Memory.Sensitivity.INTERNAL.value,
    "confidence": 1.0,
    "retention_policy": Memory.RetentionPolicy.PERSISTENT.value,
    "ttl_seconds": None,
    "expires_at": None,
    "valid_from": None,
    "valid_to": None,
    "dedupe_key": "",
}


@dataclass(frozen=True)
class Submission:
    """The outcome of ``submit_proposal``: the proposal and whether it was a replay."""

    proposal: Proposal
    replayed: bool


def submit_proposal(
    *, agent: Agent, idempotency_key: str, payload: dict[str, Any], request_hash: str
) -> Submission:
    """Freeze, classify and store a proposal; release it if policy allows.

    The same ``idempotency_key`` with the same ``request_hash`` returns the
    original proposal; with another hash it raises ``IdempotencyConflict``.
    """
    existing = _existing_submission(agent, idempotency_key, request_hash)
    if existing:
        return Submission(existing, replayed=True)
    try:
        proposal = _submit(
            agent=agent, idempotency_key=idempotency_key, payload=payload, request_hash=request_hash
        )
    except IntegrityError:
        # A concurrent request with the same key won the unique constraint.
        existing = _existing_submission(agent, idempotency_key, request_hash)
        if existing is None:
            raise
        return Submission(existing, replayed=True)
    return Submission(proposal, replayed=False)


def _existing_submission(agent: Agent, idempotency_key: str, request_hash: str) -> Proposal | None:
    proposal = Proposal.objects.filter(
        tenant_id=agent.tenant_id, submitted_by=agent, idempotency_key=idempotency_key
    ).first()
    if proposal is not None and proposal.request_hash != request_hash:
        raise IdempotencyConflict(proposal_id=str(proposal.id))
    return proposal


@transaction.atomic(durable=True)
def _submit(*, agent: Agent, idempotency_key: str, payload: dict[str, Any], request_hash: str) -> Proposal:
    return _create_proposal(
        agent=agent, idempotency_key=idempotency_key, payload=payload, request_hash=request_hash
    )


def _create_proposal(
    *, agent: Agent, idempotency_key: str, payload: dict[str, Any], request_hash: str
) -> Proposal:
    """Freeze, classify, store and maybe release one proposal (inside the caller's transaction)."""
    proposal = Proposal(
        tenant_id=agent.tenant_id,
        submitted_by=agent,
        action=payload["action"],
        idempotency_key=idempotency_key,
        request_hash=request_hash,
    )
    verdict, revisions = _freeze_and_classify(proposal, agent, payload)
    proposal.status = _STATUS_FOR_VERDICT[verdict.classification]
    proposal.save(force_insert=True)
    _link_evidence(proposal, revisions)
    _release_if_allowed(proposal, verdict)
    return proposal


@transaction.atomic(durable=True)
def amend_proposal(*, agent: Agent, proposal: Proposal, payload: dict[str, Any]) -> Proposal:
    """Replace a proposal's action after a reviewer asked for changes, and classify it afresh.

    The proposal keeps its id and target; its digest changes, so every
    decision on the old digest is stale. History keeps the old version.
    """
    proposal = Proposal.objects.select_for_update().get(pk=proposal.pk, tenant_id=agent.tenant_id)
    if proposal.submitted_by_id != agent.id:
        raise NotSubmitter()
    if proposal.status != Proposal.Status.CHANGES_REQUESTED:
        raise InvalidProposalTransition(
            f"Only proposals with changes requested can be amended, not {proposal.status}"
        )
    if payload["action"] != proposal.action or (
        proposal.action == Proposal.Action.UPDATE and payload["memory_id"] != proposal.target_memory_id
    ):
        raise AmendmentChangesTarget()
    verdict, revisions = _freeze_and_classify(proposal, agent, payload)
    proposal.transition_to(_STATUS_FOR_VERDICT[verdict.classification])
    proposal.version += 1
    proposal.save()
    proposal.evidence_links.all().delete()
    _link_evidence(proposal, revisions)
    _release_if_allowed(proposal, verdict)
    return proposal


def _freeze_and_classify(proposal: Proposal, agent: Agent, payload: dict[str, Any]):
    """Bind evidence, freeze the action, classify it; set every derived field on ``proposal``."""
    context = bind_policy_context(agent, payload.get("policy_context") or {})
    proposal.evidence = sorted(
        (_binding_json(b) for b in payload.get("evidence", [])),
        key=lambda b: (b["evidence_id"], b["revision"]),
    )
    evidence_status, revisions = _check_evidence(agent, proposal.evidence)
    proposal.policy_context = context
    proposal.rationale = payload.get("rationale", "")
    if proposal.action == Proposal.Action.CREATE:
        target_fact, result = _prepare_create(proposal, payload["memory"])
    elif proposal.action == Proposal.Action.UPDATE:
        target_fact, result = _prepare_update(proposal, agent, payload)
    else:
        target_fact, result = _prepare_verb(proposal, agent, payload)
    risk_level = context.get("risk_level") or "unspecified"
    proposal.dedupe_key = result.get("dedupe_key", "")
    proposal.memory_type = result.get("type", "")
    proposal.memory_scope = result.get("scope", "")
    proposal.risk_rank = Proposal.RISK_RANKS[risk_level]
    facts = {
        "action": proposal.action,
        "type": result.get("type"),
        "scope": result.get("scope"),
        "sensitivity": result.get("sensitivity"),
        "risk_level": risk_level,
        "evidence": evidence_status,
        "target": target_fact,
        "dedupe": _dedupe_fact(agent.tenant_id, result, proposal.target_memory_id)
        if proposal.action in (Proposal.Action.CREATE, Proposal.Action.UPDATE)
        else "none",
        "owner_explicit": _owner_explicit(context, result),
        "origin": "system" if agent.is_system else "agent",
        "retention_policy": result.get("retention_policy"),
    }
    verdict = classify(active_rule_set(), facts)
    _apply_verdict(proposal, verdict, facts)
    proposal.action_digest = proposal.compute_action_digest()
    return verdict, revisions


def _link_evidence(proposal: Proposal, revisions: list[EvidenceRevision]) -> None:
    ProposalEvidence.objects.bulk_create(
        ProposalEvidence(tenant_id=proposal.tenant_id, proposal=proposal, evidence_revision=revision)
        for revision in revisions
    )


def _release_if_allowed(proposal: Proposal, verdict: Verdict) -> None:
    if proposal.status == Proposal.Status.RELEASED:
        _release(proposal, available_at=timezone.now() + timedelta(seconds=verdict.rule.hold_seconds))


def _binding_json(binding: dict[str, Any]) -> dict[str, Any]:
    return {
        "evidence_id": str(binding["evidence_id"]),
        "revision": binding["revision"],
        "content_hash": binding["content_hash"],
    }


def _check_evidence(agent: Agent, bindings: list[dict]) -> tuple[str, list[EvidenceRevision]]:
    """Return the worst binding status and the revisions that were found."""
    if not bindings:
        return "none", []
    found = revisions_for_bindings(
        tenant=agent.tenant, bindings=[(b["evidence_id"], b["revision"]) for b in bindings]
    )
    statuses = []
    for binding in bindings:
        revision = found.get((binding["evidence_id"], binding["revision"]))
        if revision is None:
            statuses.append("unknown")
        elif revision.content_hash != binding["content_hash"]:
            statuses.append("mismatch")
        else:
            statuses.append(revision.status)
    return max(statuses, key=_EVIDENCE_SEVERITY.index), list(found.values())


def _prepare_create(proposal: Proposal, memory: dict[str, Any]) -> tuple[str, dict]:
    fields = {**_MEMORY_DEFAULTS, **_json_fields(memory)}
    if (memory.get("ttl_seconds") or memory.get("expires_at")) and "retention_policy" not in memory:
        fields["retention_policy"] = Memory.RetentionPolicy.TIME_BOUND.value
    validate_content(fields["type"], fields["content"])
    validate_retention(fields)
    proposal.target_memory_id = proposal.target_memory_id or uuid.uuid4()
    proposal.base_revision = 0
    proposal.fields = fields
    return "new", fields


def _prepare_update(proposal: Proposal, agent: Agent, payload: dict[str, Any]) -> tuple[str, dict]:
    """Return the target fact and the memory as it would be after the change ({} if missing)."""
    changes = _json_fields(payload["changes"])
    proposal.target_memory_id = payload["memory_id"]
    proposal.base_revision = payload["base_revision"]
    proposal.fields = changes
    memory = Memory.objects.filter(tenant_id=agent.tenant_id, pk=payload["memory_id"]).first()
    if memory is None:
        return "missing", {}
    if memory.revision != payload["base_revision"]:
        raise BaseRevisionStale(current_revision=memory.revision)
    result = {**memory.snapshot(), **changes}
    validate_content(result["type"], result["content"])
    validate_retention(result)
    return ("current" if memory.is_active else "inactive"), result


def _prepare_verb(proposal: Proposal, agent: Agent, payload: dict[str, Any]) -> tuple[str, dict]:
    """Freeze a lifecycle verb or a system action (fence, revalidate): a reason, no content change.

    A lifecycle transition the state machine does not allow is refused here.
    """
    proposal.target_memory_id = payload["memory_id"]
    proposal.base_revision = payload["base_revision"]
    proposal.fields = {"reason": payload["reason"]}
    memory = Memory.objects.filter(tenant_id=agent.tenant_id, pk=payload["memory_id"]).first()
    if memory is None:
        return "missing", {}
    if memory.revision != payload["base_revision"]:
        raise BaseRevisionStale(current_revision=memory.revision)
    if proposal.is_lifecycle:
        next_state(memory.state, proposal.action)
    return "current", memory.snapshot()


def _json_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """Return proposed fields as plain JSON (datetimes as ISO 8601)."""
    out = dict(fields)
    for name in _DATETIME_FIELDS:
        if isinstance(out.get(name), datetime):
            out[name] = out[name].isoformat()
    return out


def _dedupe_fact(tenant_id, result: dict, memory_id) -> str:
    if not result.get("dedupe_key"):
        return "none"
    others = list(
        active_memories_with_dedupe_key(
            tenant_id=tenant_id, dedupe_key=result["dedupe_key"], exclude_id=memory_id
        ).values_list("content", flat=True)[:20]
    )
    if not others:
        return "none"
    if any(digest(content) == digest(result["content"]) for content in others):
        return "duplicate"
    return "contradiction"


def _owner_explicit(context: dict, result: dict) -> bool:
    subject = context.get("acting_for_subject") or {}
    return context.get("consent_basis") == "explicit" and bool(result) and subject == result.get("subject")


def _apply_verdict(proposal: Proposal, verdict: Verdict, facts: dict) -> None:
    rule = verdict.rule
    proposal.classification = verdict.classification
    proposal.matched_rule = rule.id
    proposal.reason_codes = verdict.reason_codes
    proposal.policy_facts = facts
    proposal.policy_version = verdict.policy_version
    proposal.policy_fingerprint = verdict.policy_fingerprint
    proposal.required_approvals = rule.approvals
    proposal.gates = list(rule.gates)
    proposal.review_deadline = (
        timezone.now() + timedelta(hours=rule.review_window_hours) if rule.review_window_hours else None
    )


def _release(proposal: Proposal, *, available_at: datetime) -> None:
    """Hand the proposal to the executor inside the caller's transaction."""
    if not proposal_released.has_listeners(Proposal):
        raise ExecutorNotListening("No executor is connected to proposal_released")
    proposal_released.send(sender=Proposal, proposal=proposal, available_at=available_at)


@transaction.atomic(durable=True)
def withdraw_proposal(*, agent: Agent, proposal: Proposal) -> Proposal:
    """Withdraw an open proposal; a released one then executes as a no-op."""
    proposal = Proposal.objects.select_for_update().get(pk=proposal.pk, tenant_id=agent.tenant_id)
    proposal.transition_to(Proposal.Status.WITHDRAWN)
    proposal.save(update_fields=["status", "updated_at"])
    return proposal


def record_execution(proposal: Proposal, *, outcome: str, applied: bool) -> None:
    """Record the executor's outcome on a locked, released proposal (executor's transaction)."""
    proposal.transition_to(Proposal.Status.APPLIED if applied else Proposal.Status.NOT_APPLIED)
    proposal.outcome = outcome
    proposal.save(update_fields=["status", "outcome", "updated_at"])


def escalate_to_review(proposal: Proposal, *, failed_gates: list[str]) -> None:
    """Send a gated proposal whose gates failed to human review (never drop it)."""
    proposal.transition_to(Proposal.Status.PENDING_REVIEW)
    proposal.classification = Proposal.Classification.REVIEW_REQUIRED
    proposal.required_approvals = max(proposal.required_approvals, 1)
    proposal.reason_codes = [*proposal.reason_codes, *(f"gate_failed:{g}" for g in failed_gates)]
    proposal.outcome = "gate_failed"
    proposal.save(
        update_fields=[
            "status",
            "classification",
            "required_approvals",
            "reason_codes",
            "outcome",
            "updated_at",
        ]
    )


# --- Steps taken by the review workflow, inside its transaction ---------------


def conclude_review(proposal: Proposal, *, status: str) -> None:
    """Move a locked proposal under review to rejected, changes_requested or released."""
    proposal.transition_to(status)
    proposal.save(update_fields=["status", "updated_at"])
    if status == Proposal.Status.RELEASED:
        _release(proposal, available_at=timezone.now())


@transaction.atomic(durable=True)
def expire_overdue_reviews(*, limit: int = 500) -> int:
    """Expire proposals whose review window closed; return how many."""
    overdue = (
        Proposal.objects.select_for_update(skip_locked=True)
        .filter(
            status__in=[Proposal.Status.PENDING_REVIEW, Proposal.Status.CHANGES_REQUESTED],
            review_deadline__lt=timezone.now(),
        )
        .order_by("review_deadline")[:limit]
    )
    count = 0
    for proposal in overdue:
        conclude_review(proposal, status=Proposal.Status.EXPIRED)
        count += 1
    return count


def scrub_purged_content(*, tenant_id, memory_id) -> dict[str, int]:
    """Remove a purged memory's content from the proposals about it and their history.

    Digests stay (receipts refer to them); the frozen fields and the agent's
    rationale, which repeat the content, do not. Runs in the executor's
    purge transaction.
    """
    proposals = Proposal.objects.filter(tenant_id=tenant_id, target_memory_id=memory_id)
    scrubbed = {"purged": True}
    history = Proposal.history.filter(tenant_id=tenant_id, target_memory_id=memory_id)
    return {
        "proposals.Proposal": proposals.update(fields=scrubbed, rationale=""),
        "proposals.HistoricalProposal": history.update(fields=scrubbed, rationale=""),
    }


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


def _system_proposal(agent: Agent, *, key: str, payload: dict[str, Any]) -> Proposal:
    """Create a proposal Custodian makes itself, once per key, inside the caller's transaction."""
    existing = Proposal.objects.filter(
        tenant_id=agent.tenant_id, submitted_by=agent, idempotency_key=key
    ).first()
    if existing is not None:
        return existing
    request_hash = digest({**payload, "memory_id": str(payload["memory_id"])})
    return _create_proposal(agent=agent, idempotency_key=key, payload=payload, request_hash=request_hash)
