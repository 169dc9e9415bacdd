"""Freezing an action: bind evidence, normalise the fields, compute the facts and the verdict."""

import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from core.canonical import digest
from evidence.models import EvidenceRevision
from evidence.selectors import BINDING_STATUSES
from memory_core.content import validate_content, validate_retention
from memory_core.lifecycle import next_state
from memory_core.models import Memory
from memory_core.selectors import active_memories_with_dedupe_key
from proposals.errors import (
    BaseRevisionStale,
    DreamingRunForeign,
)
from proposals.models import Proposal
from proposals.payloads import EvidenceBinding, MemoryFields, ProposalPayload
from proposals.policy import Verdict, active_rule_set, classify
from proposals.policy.transition import escalation, strictest_sensitivity
from proposals.selectors import PolicyReads
from proposals.services.compaction import member_evidence, prepare_compaction
from proposals.services.entities import prepare_entity
from proposals.services.linking import prepare_link
from registrations.compiled import ActiveRegistration
from registrations.selectors import active_registration, registration_candidate
from tenancy.models import Agent
from tenancy.services import bind_policy_context

STATUS_FOR_VERDICT = {
    Proposal.Classification.AUTO_APPLY: Proposal.Status.RELEASED,
    Proposal.Classification.POLICY_GATED: Proposal.Status.RELEASED,
    Proposal.Classification.REVIEW_REQUIRED: Proposal.Status.PENDING_REVIEW,
    Proposal.Classification.DENIED: Proposal.Status.DENIED,
}
_MEMORY_DEFAULTS = Memory.optional_field_defaults()


def freeze_and_classify(
    proposal: Proposal,
    agent: Agent,
    payload: ProposalPayload,
    *,
    reviewed_path: tuple | None = None,
    registration: ActiveRegistration | None = None,
    reads: PolicyReads | None = None,
):
    """Bind evidence, freeze the action, classify it; set every derived field on ``proposal``.

    ``reviewed_path`` (classification, approvals, deadline) is the path of the
    review that asked for this amendment: the verdict never gets laxer than it.
    ``registration`` is the agent's tenant's active one when the caller already
    looked it up (a batch freezes all its items under one); ``reads`` likewise
    holds the delegations and evidence revisions a batch read for all its items.
    """
    reads = reads or PolicyReads(agent)
    claims = payload.get("policy_context") or {}
    if proposal.action != Proposal.Action.COMPACT:  # the delegation and the evidence in one query
        reads.load(subjects=[claims.get("acting_for_subject")], bindings=payload.get("evidence", []))
    context = bind_policy_context(agent, claims, may_act=reads.may_act_for)
    if proposal.action == Proposal.Action.COMPACT:  # bound to its members' evidence, never to a claim
        payload = {**payload, "evidence": member_evidence(agent.tenant_id, payload)}  # type: ignore[typeddict-item]
    proposal.evidence = sorted(
        (_binding_json(b) for b in payload.get("evidence", [])),
        key=lambda b: (b["evidence_id"], b["revision"]),
    )
    evidence_status, revisions = _check_evidence(reads, proposal.evidence)
    proposal.policy_context = context
    proposal.rationale = payload.get("rationale", "")
    if registration is None:
        registration = active_registration(tenant_id=agent.tenant_id)
    proposal.registration_version = registration.version
    if proposal.action == Proposal.Action.REGISTER:
        memory, target_fact, result = None, *_prepare_registration(proposal, agent, payload)
    elif proposal.action == Proposal.Action.CREATE:
        memory, target_fact, result = None, *_prepare_create(proposal, payload["memory"], registration)
    elif proposal.action in Proposal.ENTITY_ACTIONS:
        memory, target_fact, result = None, *prepare_entity(proposal, agent.tenant_id, payload)
    elif proposal.action == Proposal.Action.COMPACT:
        memory, target_fact, result = (
            None,
            *prepare_compaction(proposal, agent.tenant_id, payload, registration),
        )
    else:
        memory = _target_memory(agent, payload)
        prepare: Callable[[Proposal, Memory | None, ProposalPayload, ActiveRegistration], tuple[str, dict]]
        prepare = _prepare_verb
        if proposal.action == Proposal.Action.UPDATE:
            prepare = _prepare_update
        elif proposal.action == Proposal.Action.LINK:
            prepare = prepare_link
        target_fact, result = prepare(proposal, memory, payload, registration)
    before = memory.snapshot() if memory is not None else {}
    risk_level = context.get("risk_level") or "unspecified"
    proposal.dedupe_key = result.get("dedupe_key", "")
    proposal.memory_type = result.get("type", "")
    proposal.memory_scope = result.get("scope", "")
    proposal.risk_rank = Proposal.RISK_RANKS[risk_level]
    facts = {
        "action": proposal.action,
        "type": result.get("type"),
        "scope": result.get("scope"),
        "sensitivity": strictest_sensitivity(before, result),
        "risk_level": risk_level,
        "evidence": evidence_status,
        "target": target_fact,
        "dedupe": _dedupe_fact(agent.tenant_id, result, proposal.target_memory_id)
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
        "dreaming": _dreaming_fact(proposal, agent, payload),
    }
    verdict = classify(active_rule_set(), facts)
    _apply_verdict(proposal, verdict, facts)
    if reviewed_path is not None:
        hold_to_reviewed_path(proposal, *reviewed_path)
    proposal.action_digest = proposal.compute_action_digest()
    proposal.verdict_seal = proposal.compute_verdict_seal()
    return verdict, revisions


def _binding_json(binding: EvidenceBinding) -> dict[str, Any]:
    return {
        "evidence_id": str(binding["evidence_id"]),
        "revision": binding["revision"],
        "content_hash": binding["content_hash"],
    }


def _check_evidence(reads: PolicyReads, bindings: list[dict]) -> tuple[str, list[EvidenceRevision]]:
    """Return the worst binding status and the revisions that were found."""
    if not bindings:
        return "none", []
    checked = reads.binding_statuses(bindings)
    worst = max((status for _, status, _ in checked), key=BINDING_STATUSES.index)
    found = {revision.pk: revision for _, _, revision in checked if revision is not None}
    return worst, list(found.values())


def _prepare_create(
    proposal: Proposal, memory: MemoryFields, registration: ActiveRegistration
) -> tuple[str, dict]:
    fields = {**_MEMORY_DEFAULTS, **_json_fields(memory)}
    if (memory.get("ttl_seconds") or memory.get("expires_at")) and "retention_policy" not in memory:
        fields["retention_policy"] = Memory.RetentionPolicy.TIME_BOUND.value
    validate_content(fields["type"], fields["content"], registration)
    validate_retention(fields)
    proposal.target_memory_id = proposal.target_memory_id or uuid.uuid4()
    proposal.base_revision = 0
    proposal.fields = fields
    return "new", fields


def _target_memory(agent: Agent, payload: ProposalPayload) -> Memory | None:
    """Return the memory a proposal targets in the agent's tenant, with its fence, or None."""
    return Memory.objects.with_fence().filter(tenant_id=agent.tenant_id, pk=payload["memory_id"]).first()


def _prepare_update(
    proposal: Proposal, memory: Memory | None, payload: ProposalPayload, registration: ActiveRegistration
) -> tuple[str, dict]:
    """Return the target fact and the memory as it would be after the change ({} if missing)."""
    changes = _json_fields(payload["changes"])
    proposal.target_memory_id = payload["memory_id"]
    proposal.base_revision = payload["base_revision"]
    proposal.fields = changes
    if memory is None:
        return "missing", {}
    if memory.revision != payload["base_revision"]:
        raise BaseRevisionStale(current_revision=memory.revision)
    result = {**memory.snapshot(), **changes}
    validate_content(result["type"], result["content"], registration)
    validate_retention(result)
    return ("current" if memory.is_active else "inactive"), result


def _prepare_verb(
    proposal: Proposal, memory: Memory | None, payload: ProposalPayload, _registration: ActiveRegistration
) -> tuple[str, dict]:
    """Freeze a lifecycle verb or a system action (fence, revalidate): a reason, no content change.

    A lifecycle transition the state machine does not allow is refused here.
    """
    proposal.target_memory_id = payload["memory_id"]
    proposal.base_revision = payload["base_revision"]
    proposal.fields = {"reason": payload["reason"]}
    if memory is None:
        return "missing", {}
    if memory.revision != payload["base_revision"]:
        raise BaseRevisionStale(current_revision=memory.revision)
    if proposal.is_lifecycle:
        next_state(memory.state, proposal.action)
    return "current", memory.snapshot()


def _prepare_registration(proposal: Proposal, agent: Agent, payload: ProposalPayload) -> tuple[str, dict]:
    """Freeze a publish request: the candidate's id, fingerprint and base, and who asked.

    The fingerprint is in the action digest, so a candidate changed after
    its reviewers saw it no longer matches what they approved.
    """
    candidate = registration_candidate(tenant_id=agent.tenant_id, candidate_id=payload["registration_id"])
    proposal.target_memory_id = candidate.id
    proposal.base_revision = candidate.base_version
    proposal.fields = {
        "registration_id": str(candidate.id),
        "fingerprint": candidate.fingerprint,
        "base_version": candidate.base_version,
        "version": candidate.base_version + 1,
        "requested_by": payload["requested_by"],
        "reason": payload["reason"],
    }
    return "new", {}


def _json_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Return proposed fields as plain JSON (datetimes as ISO 8601)."""
    out = dict(fields)
    for name in Memory.DATETIME_FIELDS:
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


def _owner_explicit(context: dict, result: dict) -> bool:
    return context.get("consent_basis") == "explicit" and _own_subject(context, result)


def _own_subject(context: dict, result: dict) -> bool:
    """The agent acts (under a checked grant) for the memory's own subject, consent or not."""
    subject = context.get("acting_for_subject") or {}
    return bool(result) and subject == result.get("subject")


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
