"""Freezing an action: bind evidence, normalise the fields, compute the facts and the verdict."""

from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.core.exceptions import ValidationError
from django.utils import timezone

from admission import Scan
from core.canonical import digest
from core.errors import DomainError
from evidence.models import EvidenceBinding, EvidenceRevision
from evidence.selectors import BINDING_STATUSES
from memory_core.models import Memory
from memory_core.statements import is_statement_key
from proposals.errors import DreamingRunForeign, SecretDetected
from proposals.firewall import screen, withhold
from proposals.kinds import KINDS, Freezing, KindSpec, Prepared
from proposals.models import Proposal
from proposals.payloads import ProposalPayload
from proposals.policy import Verdict, active_rule_set, classify
from proposals.policy.transition import escalation, strictest_sensitivity
from proposals.selectors import PolicyReads
from registrations.compiled import ActiveRegistration
from registrations.selectors import active_registration
from tenancy.models import Agent
from tenancy.services import bind_policy_context

STATUS_FOR_VERDICT: dict[str, Proposal.Status] = {  # looked up by the verdict's plain str
    Proposal.Classification.AUTO_APPLY: Proposal.Status.RELEASED,
    Proposal.Classification.POLICY_GATED: Proposal.Status.RELEASED,
    Proposal.Classification.REVIEW_REQUIRED: Proposal.Status.PENDING_REVIEW,
    Proposal.Classification.DENIED: Proposal.Status.DENIED,
}


def freeze_and_classify(
    proposal: Proposal,
    agent: Agent,
    payload: ProposalPayload,
    *,
    reviewed_path: tuple[str, int, datetime | None] | None = None,
    registration: ActiveRegistration | None = None,
    reads: PolicyReads | None = None,
) -> tuple[Verdict, list[EvidenceRevision]]:
    """Bind evidence, freeze the action, classify it; set every derived field on ``proposal``.

    ``reviewed_path`` (classification, approvals, deadline) is the path of the
    review that asked for this amendment: the verdict never gets laxer than it.
    ``registration`` is the agent's tenant's active one when the caller already
    looked it up (a batch freezes all its items under one); ``reads`` likewise
    holds the delegations and evidence revisions a batch read for all its items.
    The kind's own part (its target, fields and refusals) is ``proposals.kinds.KINDS``.
    """
    reads = reads or PolicyReads(agent)
    kind = KINDS[Proposal.Action(proposal.action)]
    payload = _bind_context(proposal, agent, payload, kind, reads)
    evidence_status, revisions = _check_evidence(reads, proposal.evidence)
    if registration is None:
        registration = active_registration(tenant_id=agent.tenant_id)
    proposal.registration_version = registration.version
    freezing = Freezing(proposal, agent, payload, registration)
    screened = screen(payload, revisions)
    facts = _facts(freezing, _prepare(kind, freezing, screened), evidence_status, reads)
    facts.update(screened.facts())
    verdict = classify(active_rule_set(), facts)
    _apply_verdict(proposal, verdict, facts)
    proposal.admission_findings = screened.stored()
    if screened.contains_secret and verdict.classification == Proposal.Classification.DENIED:
        withhold(proposal, screened)
    if reviewed_path is not None:
        hold_to_reviewed_path(proposal, *reviewed_path)
    proposal.action_digest = proposal.compute_action_digest()
    proposal.verdict_seal = proposal.compute_verdict_seal()
    return verdict, revisions


def _prepare(kind: KindSpec, freezing: Freezing, screened: Scan) -> Prepared:
    """Freeze the kind's fields; a refusal of text holding a secret never answers with that text."""
    try:
        return kind.prepare(freezing)
    except (DomainError, ValidationError):
        if screened.contains_secret:
            raise SecretDetected(findings=screened.stored()) from None
        raise


def _bind_context(
    proposal: Proposal, agent: Agent, payload: ProposalPayload, kind: KindSpec, reads: PolicyReads
) -> ProposalPayload:
    """Bind the checked policy context, the rationale and the evidence; return the payload as bound.

    A kind whose evidence the server names (``bound_evidence``) is bound to
    that, never to the payload's claims.
    """
    claims = payload.get("policy_context") or {}
    if kind.bound_evidence is None:  # the delegation and the evidence in one query
        reads.load(subjects=[claims.get("acting_for_subject")], bindings=payload.get("evidence", []))
    proposal.policy_context = bind_policy_context(agent, claims, may_act=reads.may_act_for)
    if kind.bound_evidence is not None:
        payload = {**payload, "evidence": kind.bound_evidence(agent.tenant_id, payload)}  # type: ignore[typeddict-item]
    proposal.evidence = sorted(
        (_binding_json(b) for b in payload.get("evidence", [])),
        key=lambda b: (b["evidence_id"], b["revision"]),
    )
    proposal.rationale = payload.get("rationale", "")
    return payload


def _facts(
    freezing: Freezing, prepared: Prepared, evidence_status: str, reads: PolicyReads
) -> dict[str, Any]:
    """Record what the frozen action results in on the proposal; return the facts the rule set reads."""
    proposal, agent, context = freezing.proposal, freezing.agent, freezing.proposal.policy_context
    memory, result = prepared.memory, prepared.result
    before = memory.snapshot() if memory is not None else {}
    risk_level = context.get("risk_level") or "unspecified"
    proposal.dedupe_key = result.get("dedupe_key", "")
    proposal.memory_type = result.get("type", "")
    proposal.memory_scope = result.get("scope", "")
    proposal.risk_rank = Proposal.RISK_RANKS[risk_level]
    return {
        "action": proposal.action,
        "type": result.get("type"),
        "scope": result.get("scope"),
        "sensitivity": strictest_sensitivity(before, result),
        "risk_level": risk_level,
        "evidence": evidence_status,
        "target": prepared.target,
        "dedupe": _dedupe_fact(reads, result, proposal.target_id)
        if proposal.action in Proposal.CLAIMS_DEDUPE_KEY
        else "none",
        "owner_explicit": _owner_explicit(context, result),
        "own_subject": _own_subject(context, result),
        "origin": "system" if agent.is_system else "agent",
        "retention_policy": result.get("retention_policy"),
        "escalation": escalation(
            proposal.action, before, result, fenced=memory is not None and memory.is_fenced
        ),
        "ttl": _ttl_fact(memory),
        "dreaming": _dreaming_fact(proposal, agent, freezing.payload),
    }


def _binding_json(binding: EvidenceBinding) -> dict[str, Any]:
    return {
        "evidence_id": str(binding["evidence_id"]),
        "revision": binding["revision"],
        "content_hash": binding["content_hash"],
    }


def _check_evidence(reads: PolicyReads, bindings: list[dict[str, Any]]) -> tuple[str, list[EvidenceRevision]]:
    """Return the worst binding status and the revisions that were found."""
    if not bindings:
        return "none", []
    checked = reads.binding_statuses(bindings)
    worst = max((status for _, status, _ in checked), key=BINDING_STATUSES.index)
    found = {revision.pk: revision for _, _, revision in checked if revision is not None}
    return worst, list(found.values())


def _dedupe_fact(reads: PolicyReads, result: dict[str, Any], memory_id: UUID) -> str:
    """Does another active memory hold the key: saying the same (duplicate) or not (contradiction)?

    Holding a key derived from the statement is saying the same, whatever else differs.
    """
    key = result.get("dedupe_key")
    if not key:
        return "none"
    others = reads.key_holder_contents(key, exclude_id=memory_id)[:20]
    if not others:
        return "none"
    if is_statement_key(key) or any(digest(content) == digest(result["content"]) for content in others):
        return "duplicate"
    return "contradiction"


def _dreaming_fact(proposal: Proposal, agent: Agent, payload: ProposalPayload) -> str:
    """Bind the proposal to its Dreaming run (the tenant's system agent only) and return its mode."""
    run = payload.get("dreaming_run")
    if run is None:
        return "none"
    if not agent.is_system or run.tenant_id != agent.tenant_id:
        raise DreamingRunForeign()
    proposal.dreaming_run = run
    return "high_risk" if payload.get("dreaming_high_risk") else run.mode


def _ttl_fact(memory: Memory | None) -> str:
    if memory is None or memory.expires_at is None:
        return "none"
    return "elapsed" if memory.expires_at <= timezone.now() else "running"


def _owner_explicit(context: dict[str, Any], result: dict[str, Any]) -> bool:
    return context.get("consent_basis") == "explicit" and _own_subject(context, result)


def _own_subject(context: dict[str, Any], result: dict[str, Any]) -> bool:
    """The agent acts (under a checked grant) for the memory's own subject, consent or not."""
    subject = context.get("acting_for_subject") or {}
    return bool(result) and subject == result.get("subject")


def _apply_verdict(proposal: Proposal, verdict: Verdict, facts: dict[str, Any]) -> None:
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


# From the laxest path to the strictest.
_PATH_ORDER = ["auto_apply", "policy_gated", "review_required", "denied"]


def hold_to_reviewed_path(
    proposal: Proposal, asked_classification: str, asked_approvals: int, asked_deadline: datetime | None
) -> None:
    """Keep an amended proposal on the path that asked for changes, or a stricter one.

    An amendment that would now auto-apply goes back to review with the
    approvals first required; one that needs more approvals keeps the larger
    number; ``amended_after_review`` tells the reviewers why it is back.
    """
    if _PATH_ORDER.index(proposal.classification) >= _PATH_ORDER.index(asked_classification):
        proposal.required_approvals = max(proposal.required_approvals, asked_approvals)
    else:
        proposal.classification = asked_classification
        proposal.required_approvals = asked_approvals
        proposal.gates = []
        proposal.review_deadline = asked_deadline
    if proposal.classification == Proposal.Classification.REVIEW_REQUIRED:
        proposal.reason_codes = [*proposal.reason_codes, "amended_after_review"]
