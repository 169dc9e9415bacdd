"""MGP names for Custodian memories (``MgpRecord``), MGP audit events, and a memory in MGP's shape."""

import uuid
from dataclasses import dataclass
from typing import Any

from core.errors import TenantMismatch
from memory_core.models import Memory
from memory_core.read_policy import ReadRule, active_read_policy
from memory_core.recall import read_memory, subject_pseudonym
from memory_core.selectors import MemoryNotFound
from mgp import shapes
from mgp.models import MgpEvent, MgpRecord
from mgp.validation import MgpError
from proposals.models import Proposal
from tenancy.models import Agent
from tenancy.services import ActingForNotGranted, bind_policy_context

OPEN = (Proposal.Status.PENDING_REVIEW, Proposal.Status.CHANGES_REQUESTED, Proposal.Status.RELEASED)


@dataclass
class Outcome:
    """What an MGP call answers: HTTP status and ``data``."""

    status: int
    data: dict[str, Any]


def authorise(agent: Agent, context: dict) -> dict:
    """The policy context as facts (tenant and actor from the token, acting-for from a live grant).

    Every call binds its context here, and every task read binds the task's
    stored context again: a grant revoked since refuses the read as REST does.
    """
    try:
        return bind_policy_context(agent, dict(context))
    except TenantMismatch as error:
        raise MgpError("MGP_POLICY_DENIED", str(error.detail), rule="actor_mismatch") from None
    except ActingForNotGranted as error:
        raise MgpError("MGP_POLICY_DENIED", str(error.detail), rule="acting_for_not_granted") from None


def record_refusal(
    agent: Agent, operation: str, context: dict, *, request_id: str, code: str, reason: str, target: Any
) -> None:
    """Audit an MGP refusal that no proposal or access event records."""
    refusal = {"code": (code or operation)[:40], "reason": reason[:200], "target": str(target or "")[:256]}
    _record_event(agent, context, operation, request_id, allowed=False, **refusal)


def record_bulk_read(
    agent: Agent, operation: str, context: dict, *, request_id: str, result_count: int
) -> None:
    """Audit an MGP bulk read (export, sync) that no access event records."""
    _record_event(agent, context, operation, request_id, code=operation[:40], result_count=result_count)


def _record_event(agent: Agent, context: dict, operation: str, request_id: str, **columns: Any) -> None:
    """Write the event with the context as audit keeps it: the subject as a pseudonym, no request id.

    ``columns`` are the event's own (refused or allowed, code, reason, target, result count).
    """
    subject = context.get("acting_for_subject")
    if isinstance(subject, dict):
        context = {**context, "acting_for_subject": subject_pseudonym(subject)}
    context = {key: value for key, value in context.items() if key != "mgp_request_id"}
    MgpEvent.objects.create(
        tenant_id=agent.tenant_id,
        agent=agent,
        operation=operation,
        request_id=str(request_id)[:200],
        allowed=columns.pop("allowed", True),
        **columns,
        policy_context=context,
        correlation_id=str(context.get("correlation_id") or "")[:200],
    )


def live_record(agent: Agent, external_id: str) -> tuple[MgpRecord, Memory | None] | None:
    """The record for ``external_id`` in the agent's tenant and its memory (None while pending).

    A record whose proposal ended without a memory, or whose memory was
    purged, frees the id. Another tenant's ids are simply not here.
    """
    record = (
        MgpRecord.objects.select_related("proposal")
        .filter(tenant_id=agent.tenant_id, external_id=external_id)
        .first()
    )
    if record is None:
        return _adopt(agent, external_id)
    memory = Memory.objects.with_fence().filter(tenant_id=agent.tenant_id, pk=record.memory_id).first()
    if memory is None and record.proposal.status not in OPEN:
        record.delete()
        return None
    return record, memory


def _adopt(agent: Agent, external_id: str) -> tuple[MgpRecord, Memory] | None:
    """A memory proposed over REST has no MGP id: MGP names it by its Custodian id."""
    try:
        memory_id = uuid.UUID(external_id)
    except ValueError:
        return None
    memory = Memory.objects.filter(tenant_id=agent.tenant_id, pk=memory_id).first()
    origin = Proposal.objects.filter(
        tenant_id=agent.tenant_id, target_id=memory_id, action=Proposal.Action.CREATE
    ).first()
    if memory is None or origin is None:
        return None
    record, _ = MgpRecord.objects.get_or_create(
        tenant_id=agent.tenant_id,
        external_id=external_id,
        defaults={
            "memory_id": memory_id,
            "proposal": origin,
            "source": {"kind": "system", "ref": "custodian"},
        },
    )
    return record, memory


def existing(agent: Agent, external_id: str) -> tuple[MgpRecord, Memory]:
    found = live_record(agent, external_id)
    if found is None or found[1] is None:
        raise MgpError("MGP_MEMORY_NOT_FOUND", "No memory with this id in your tenant")
    return found[0], found[1]


def readable(context: dict, memory: Memory) -> ReadRule:
    """The view of ``memory`` the read policy gives this caller; a denied one is not found.

    Decided exactly as a get decides it (``memory`` carries its fence), so a
    merge or patch that starts from the stored memory reads only what the
    caller could have read.
    """
    rule = active_read_policy().decide(memory, context)
    if rule.mode == "deny":
        raise MgpError("MGP_MEMORY_NOT_FOUND", "No memory with this id in your tenant")
    return rule


def refuse_merge_unless_raw(rule: ReadRule) -> None:
    """A merge copies stored fields into the caller's proposal: only from a raw view."""
    if rule.mode != "raw":
        raise MgpError(
            "MGP_POLICY_DENIED",
            f"Your view of this memory is {rule.mode}: a merge would copy what you may not read;"
            " write the whole memory with merge_hint replace instead",
            rule=rule.id,
            reason="merge_needs_raw_view",
        )


def render(agent: Agent, context: dict, record: MgpRecord, resolution: str | None = None) -> dict[str, Any]:
    """The memory in the view Custodian's read policy allows this caller (the read is audited)."""
    try:
        view, mode, rule = read_memory(agent=agent, memory_id=record.memory_id, context=context)
    except MemoryNotFound:
        raise MgpError("MGP_MEMORY_NOT_FOUND", "No memory with this id in your tenant") from None
    stored = shapes.stored_content(agent.tenant_id, [record.memory_id]) if mode == "masked" else {}
    memory = shapes.mgp_memory(
        view,
        mode,
        external_id=record.external_id,
        record=record,
        tenant_name=agent.tenant.name,
        masked_source=stored.get(str(record.memory_id)),
    )
    data = {
        "memory": memory,
        "return_mode": mode,
        "redaction_info": shapes.redaction_info(mode, rule),
        "consumable_text": shapes.consumable_text(memory),
    }
    if resolution:
        data["resolution"] = resolution
    return data
