"""MGP writes: every write, update and lifecycle verb becomes a Custodian proposal.

MGP's ``source`` is registered as evidence and cited with its content hash;
``request_id`` is the idempotency key; the policy engine decides. An
auto-applied proposal is waited for (``CUSTODIAN_MGP_WAIT_SECONDS``) and
answered synchronously; one that needs people becomes an MGP task.
"""

import contextlib
import time
import uuid
from dataclasses import dataclass
from typing import Any, cast

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.canonical import digest
from core.errors import DomainError
from evidence.services import register_evidence
from memory_core.models import Memory
from memory_core.recall import read_memory, subject_pseudonym
from memory_core.selectors import MemoryNotFound, active_memories_with_dedupe_key
from mgp import shapes
from mgp.models import MgpEvent, MgpRecord, MgpTask
from mgp.validation import MgpError, validate
from proposals.models import Proposal
from proposals.payloads import ProposalPayload
from proposals.selectors import proposal_by_idempotency_key
from proposals.services import submit_proposal, withdraw_proposal
from tenancy.models import Agent

OPEN = (Proposal.Status.PENDING_REVIEW, Proposal.Status.CHANGES_REQUESTED, Proposal.Status.RELEASED)
STATE_OF_VERB = {"expire": "expired", "revoke": "revoked", "delete": "deleted"}
CONFLICT_REASONS = {"duplicate_of_active_memory", "contradicts_active_memory", "dedupe_conflict"}


@dataclass
class Outcome:
    """What an MGP call answers: HTTP status and ``data``."""

    status: int
    data: dict[str, Any]


def record_event(
    agent: Agent,
    operation: str,
    context: dict,
    *,
    request_id: str,
    code: str = "",
    reason: str = "",
    target: Any = None,
    allowed: bool = False,
    result_count: int | None = None,
) -> None:
    """Audit an MGP refusal or bulk read that no proposal or access event records."""
    subject = context.get("acting_for_subject")
    if isinstance(subject, dict):
        context = {**context, "acting_for_subject": subject_pseudonym(subject)}
    context = {key: value for key, value in context.items() if key != "mgp_request_id"}
    MgpEvent.objects.create(
        tenant_id=agent.tenant_id,
        agent=agent,
        operation=operation,
        request_id=str(request_id)[:200],
        allowed=allowed,
        code=(code or operation)[:40],
        reason=reason[:200],
        target=str(target or "")[:256],
        result_count=result_count,
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
    memory = Memory.objects.filter(tenant_id=agent.tenant_id, pk=record.memory_id).first()
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
        tenant_id=agent.tenant_id, target_memory_id=memory_id, action=Proposal.Action.CREATE
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


def _register_source(agent: Agent, source: dict, external_id: str, request_id: str) -> dict:
    revision = register_evidence(
        agent=agent,
        kind=shapes.EVIDENCE_KIND.get(source.get("kind", ""), "document"),
        external_ref=f"mgp:{source.get('kind')}:{source.get('ref')}#{uuid.uuid4().hex}"[:500],
        content={"mgp_source": source, "memory_id": external_id, "request_id": request_id},
    )
    return {
        "evidence_id": revision.source_id,
        "revision": revision.revision,
        "content_hash": revision.content_hash,
    }


def _submit(agent: Agent, key: str, payload: dict, request_hash: str) -> Proposal:
    context = payload.get("policy_context") or {}
    clean = {k: v for k, v in context.items() if k != "mgp_request_id"}
    proposal_payload = cast(ProposalPayload, {**payload, "policy_context": clean})
    try:
        submission = submit_proposal(
            agent=agent,
            idempotency_key=f"mgp:{key}"[:200],
            payload=proposal_payload,
            request_hash=request_hash,
        )
    except DomainError as error:
        raise translate(error) from None
    proposal = submission.proposal
    if proposal.status == Proposal.Status.DENIED:
        raise denial(proposal)
    return proposal


def denial(proposal: Proposal) -> MgpError:
    reason = (proposal.reason_codes or ["denied"])[0]
    code = "MGP_CONFLICT_UNRESOLVED" if reason in CONFLICT_REASONS else "MGP_POLICY_DENIED"
    return MgpError(
        code,
        f"Rule {proposal.matched_rule} denied this change ({reason})",
        rule=proposal.matched_rule,
        reason_codes=proposal.reason_codes,
        proposal_id=str(proposal.id),
    )


def translate(error: DomainError) -> MgpError:
    """Custodian's problem codes as MGP error codes."""
    code = {
        400: "MGP_INVALID_OBJECT",
        403: "MGP_POLICY_DENIED",
        404: "MGP_MEMORY_NOT_FOUND",
        409: "MGP_CONFLICT_UNRESOLVED",
        422: "MGP_INVALID_OBJECT",
    }.get(error.status, "MGP_BACKEND_ERROR")
    return MgpError(code, error.detail, reason=error.code)


def deadline() -> float:
    """When a call stops waiting for receipts: one budget per MGP call, however many proposals."""
    return time.monotonic() + settings.CUSTODIAN_MGP_WAIT_SECONDS


def settle(proposal: Proposal, until: float | None = None) -> Proposal:
    """Wait (bounded) for the executor to apply a released proposal."""
    until = deadline() if until is None else until
    while proposal.status == Proposal.Status.RELEASED and time.monotonic() < until:
        time.sleep(0.05)
        proposal.refresh_from_db(fields=["status", "outcome"])
    return proposal


def finish(
    agent: Agent,
    context: dict,
    proposal: Proposal,
    *,
    operation: str,
    request_id: str,
    answer: dict[str, Any],
    until: float | None = None,
) -> Outcome:
    """Answer an applied proposal now; a pending one as a 202 task; a failed one as an error."""
    proposal = settle(proposal, until)
    if proposal.status == Proposal.Status.APPLIED:
        return Outcome(200, resolve_answer(agent, context, answer))
    if proposal.status in OPEN:
        task = MgpTask.objects.create(
            tenant_id=agent.tenant_id,
            agent=agent,
            operation=operation,
            request_id=request_id,
            proposal=proposal,
            request={"context": context, "answer": answer},
            message=f"Proposal {proposal.id} is {proposal.status} ({', '.join(proposal.reason_codes)})",
        )
        return Outcome(202, {"task": task_json(task)})
    raise failure(proposal)


def failure(proposal: Proposal) -> MgpError:
    if proposal.status == Proposal.Status.DENIED:
        return denial(proposal)
    if proposal.outcome in CONFLICT_REASONS or proposal.outcome == "stale":
        return MgpError(
            "MGP_CONFLICT_UNRESOLVED", f"Not applied: {proposal.outcome}", proposal_id=str(proposal.id)
        )
    return MgpError(
        "MGP_POLICY_DENIED" if proposal.status == Proposal.Status.REJECTED else "MGP_BACKEND_ERROR",
        f"Proposal {proposal.id} ended {proposal.status} ({proposal.outcome or 'no outcome'})",
        proposal_id=str(proposal.id),
        retryable=False,
    )


def resolve_answer(agent: Agent, context: dict, answer: dict[str, Any]) -> dict[str, Any]:
    """Build the synchronous MGP answer once the proposal applied."""
    if answer["kind"] == "memory":
        record = MgpRecord.objects.get(tenant_id=agent.tenant_id, external_id=answer["external_id"])
        if "extensions" in answer:
            record.extensions = answer["extensions"]
            record.source = answer.get("source") or record.source
            record.save(update_fields=["extensions", "source"])
        return render(agent, context, record, answer.get("resolution"))
    if answer["kind"] == "state":
        if answer["state"] == "purged":
            forget(agent, answer["memory_id"])
        return {key: value for key, value in answer.items() if key != "kind"}
    raise AssertionError(answer["kind"])


def forget(agent: Agent, external_id: str) -> None:
    """After a purge: drop the id's record and what its tasks kept (contexts name the subject)."""
    record = MgpRecord.objects.filter(tenant_id=agent.tenant_id, external_id=external_id).first()
    if record is None:
        return
    MgpTask.objects.filter(tenant_id=agent.tenant_id, proposal__target_memory_id=record.memory_id).update(
        request={"context": {}, "answer": {"kind": "state", "memory_id": external_id, "state": "purged"}}
    )
    record.delete()


def _replay(agent: Agent, context: dict, request_id: str, body: dict, operation: str) -> Outcome | None:
    proposal = proposal_by_idempotency_key(agent=agent, idempotency_key=f"mgp:{request_id}"[:200])
    if proposal is None:
        return None
    if proposal.request_hash != digest(body):
        raise MgpError("MGP_CONFLICT_UNRESOLVED", "request_id was used for another request")
    task = MgpTask.objects.filter(tenant_id=agent.tenant_id, proposal=proposal).first()
    if task is not None:
        result = follow_proposal(task)
        if task.status == MgpTask.Status.COMPLETED and result and "error" not in result:
            return Outcome(200, result)  # as the first answer would have been, had it waited long enough
        waiting = task.status in (MgpTask.Status.PENDING, MgpTask.Status.RUNNING)
        return Outcome(202 if waiting else 200, {"task": task_json(task, result)})
    if proposal.status == Proposal.Status.DENIED:
        raise denial(proposal)
    if proposal.status != Proposal.Status.APPLIED:
        raise failure(proposal)
    # Applied before: answer as the first time, from the memory as it is now.
    record = MgpRecord.objects.filter(tenant_id=agent.tenant_id, memory_id=proposal.target_memory_id).first()
    if proposal.action in STATE_OF_VERB or proposal.action == Proposal.Action.PURGE or record is None:
        external = record.external_id if record else str(proposal.target_memory_id)
        state = STATE_OF_VERB.get(proposal.action, "purged")
        return Outcome(200, {"memory_id": external, "state": state})
    return Outcome(200, render(agent, context, record, "created" if proposal.action == "create" else None))


def write(agent: Agent, context: dict, request_id: str, payload: dict, *, key: str | None = None) -> Outcome:
    """MGP write: a create proposal, or a merge onto an existing memory as the hint says."""
    key = key or request_id
    replay = _replay(agent, context, key, payload, "write")
    if replay:
        return replay
    if "candidate" in payload:
        candidate = payload["candidate"]
        memory = shapes.candidate_memory(
            candidate, f"mem_{uuid.uuid4().hex}", timezone.now().isoformat().replace("+00:00", "Z")
        )
        hint = payload.get("merge_hint") or candidate.get("merge_hint")
    else:
        memory, hint = payload["memory"], payload.get("merge_hint")
    validate(memory, "memory-object.schema.json")
    claimed = (memory.get("backend_ref") or {}).get("tenant_id")
    if claimed and claimed not in (agent.tenant.name, str(agent.tenant_id)):
        raise MgpError("MGP_SCOPE_VIOLATION", "backend_ref.tenant_id names another tenant")
    match = _match(agent, memory, hint)
    strategy = (hint or {}).get("strategy")
    if match is None:
        return _create(agent, context, key, payload, memory, hint)
    record, current = match
    if current is None or strategy in (None, "create", "manual_review_required"):
        raise MgpError(
            "MGP_CONFLICT_UNRESOLVED", "A memory with this id or key exists", memory_id=record.external_id
        )
    if not current.is_active:
        raise MgpError(
            "MGP_CONFLICT_UNRESOLVED", f"The matching memory is {current.state}; merges never revive it"
        )
    if (
        hint.get("if_match_updated_at")
        and shapes.parse_time(hint["if_match_updated_at"]) != current.updated_at
    ):
        raise MgpError("MGP_CONFLICT_UNRESOLVED", "if_match_updated_at does not match")
    if strategy in ("dedupe", "reinforce"):
        resolution = "deduped" if strategy == "dedupe" else "reinforced"
        return Outcome(200, render(agent, context, record, resolution))
    content = memory["content"]
    if strategy == "merge":
        content = _deep_merge(shapes.from_content(current.content), content)
    changes = {"content": shapes.to_content(agent.tenant_id, current.type, content)}
    for name in ("sensitivity", "confidence"):
        if strategy != "merge" and name in memory and memory[name] != getattr(current, name):
            changes[name] = memory[name]
    resolution = "merged" if strategy == "merge" else "replaced"
    return _update(agent, context, key, payload, record, current, changes, memory.get("source"), resolution)


def _match(agent: Agent, memory: dict, hint: dict | None) -> tuple[MgpRecord, Memory | None] | None:
    found = live_record(agent, memory["memory_id"])
    if found:
        return found
    hint = hint or {}
    if hint.get("if_match_memory_id"):
        found = live_record(agent, hint["if_match_memory_id"])
        if found:
            return found
    if hint.get("dedupe_key"):
        holder = active_memories_with_dedupe_key(
            tenant_id=agent.tenant_id, dedupe_key=hint["dedupe_key"]
        ).first()
        record = holder and MgpRecord.objects.filter(tenant_id=agent.tenant_id, memory_id=holder.pk).first()
        if record:
            return record, holder
    return None


def _deep_merge(base: dict, incoming: dict) -> dict:
    out = dict(base)
    for key, value in incoming.items():
        out[key] = (
            _deep_merge(out[key], value)
            if isinstance(out.get(key), dict) and isinstance(value, dict)
            else value
        )
    return out


def _create(agent: Agent, context: dict, key: str, body: dict, memory: dict, hint: dict | None) -> Outcome:
    try:
        fields = shapes.memory_fields(agent.tenant_id, memory, dedupe_key=(hint or {}).get("dedupe_key", ""))
    except (KeyError, ValueError) as error:
        raise MgpError("MGP_INVALID_OBJECT", f"Cannot map the memory: {error}") from None
    binding = _register_source(agent, memory["source"], memory["memory_id"], key)
    proposal = _submit(
        agent,
        key,
        {
            "action": "create",
            "memory": fields,
            "evidence": [binding],
            "policy_context": context,
            "rationale": f"MGP write {key}",
        },
        digest(body),
    )
    try:
        with transaction.atomic():
            MgpRecord.objects.create(
                tenant_id=agent.tenant_id,
                external_id=memory["memory_id"],
                memory_id=proposal.target_memory_id,
                proposal=proposal,
                source=memory["source"],
                extensions=memory.get("extensions") or {},
            )
    except IntegrityError:
        _withdraw_quietly(agent, proposal)
        raise MgpError("MGP_CONFLICT_UNRESOLVED", "A memory with this id exists") from None
    answer = {"kind": "memory", "external_id": memory["memory_id"], "resolution": "created"}
    return finish(agent, context, proposal, operation="write", request_id=key, answer=answer)


def _withdraw_quietly(agent: Agent, proposal: Proposal) -> None:
    with contextlib.suppress(DomainError):
        withdraw_proposal(agent=agent, proposal=proposal)


def _update(
    agent: Agent,
    context: dict,
    key: str,
    body: dict,
    record: MgpRecord,
    current: Memory,
    changes: dict,
    source: dict | None,
    resolution: str | None,
    extensions: dict | None = None,
) -> Outcome:
    source = source or record.source or {"kind": "system", "ref": "mgp"}
    binding = _register_source(agent, source, record.external_id, key)
    proposal = _submit(
        agent,
        key,
        {
            "action": "update",
            "memory_id": current.pk,
            "base_revision": current.revision,
            "changes": changes,
            "evidence": [binding],
            "policy_context": context,
            "rationale": f"MGP update {key}",
        },
        digest(body),
    )
    answer = {
        "kind": "memory",
        "external_id": record.external_id,
        "resolution": resolution,
        "extensions": record.extensions if extensions is None else extensions,
        "source": source,
    }
    return finish(agent, context, proposal, operation="update", request_id=key, answer=answer)


MUTABLE = (
    "content",
    "sensitivity",
    "confidence",
    "retention_policy",
    "ttl_seconds",
    "valid_from",
    "valid_to",
)


def update(agent: Agent, context: dict, request_id: str, payload: dict) -> Outcome:
    """MGP update: the patch merged onto the stored memory, proposed as an update on its revision."""
    replay = _replay(agent, context, request_id, payload, "update")
    if replay:
        return replay
    record, current = existing(agent, payload["memory_id"])
    patch = payload["patch"]
    for name in ("memory_id", "subject", "scope", "type"):
        if name in patch and patch[name] != _stored(record, current)[name]:
            raise MgpError(
                "MGP_INVALID_OBJECT", f"{name} is immutable; write a new memory instead", field=name
            )
    if not current.is_active:
        raise MgpError(
            "MGP_POLICY_DENIED",
            f"The memory is {current.state}; it is never updated",
            rule="deny-inactive-target",
        )
    stored = _stored(record, current)
    merged = dict(stored)
    for name, value in patch.items():
        if name in ("content", "backend_ref", "extensions") and isinstance(value, dict):
            merged[name] = {**(stored.get(name) or {}), **value}
        else:
            merged[name] = value
    validate(merged, "memory-object.schema.json")
    changes: dict[str, Any] = {}
    if merged["content"] != stored["content"]:
        changes["content"] = shapes.to_content(agent.tenant_id, current.type, merged["content"])
    for name in MUTABLE[1:]:
        if name in patch and merged.get(name) != stored.get(name):
            changes[name] = shapes.parse_time(merged[name]) if name.startswith("valid_") else merged[name]
    if not changes and merged.get("extensions") == stored.get("extensions"):
        return Outcome(200, render(agent, context, record))
    if not changes:  # only adapter-local fields: Custodian's memory is unchanged
        record.extensions = merged.get("extensions") or {}
        record.save(update_fields=["extensions"])
        return Outcome(200, render(agent, context, record))
    return _update(
        agent,
        context,
        request_id,
        payload,
        record,
        current,
        changes,
        None,
        None,
        merged.get("extensions") or {},
    )


def _stored(record: MgpRecord, memory: Memory) -> dict[str, Any]:
    out: dict[str, Any] = {
        "memory_id": record.external_id,
        "subject": {"kind": memory.subject_kind, "id": memory.subject_id},
        "scope": memory.scope,
        "type": memory.type,
        "content": shapes.from_content(memory.content),
        "source": record.source or {"kind": "system", "ref": "mgp"},
        "created_at": memory.created_at.isoformat(),
        "confidence": memory.confidence,
        "sensitivity": memory.sensitivity,
        "retention_policy": memory.retention_policy,
        "extensions": record.extensions or {},
    }
    if memory.ttl_seconds:
        out["ttl_seconds"] = memory.ttl_seconds
    return out


def lifecycle(agent: Agent, context: dict, request_id: str, verb: str, payload: dict) -> Outcome:
    """expire, revoke, delete, purge: a lifecycle proposal on the memory's current revision.

    The state machine holds: a repeated verb answers the current state, a
    deleted memory never expires again. MGP's purge of a live memory is
    Custodian's delete and then purge, each a proposal.
    """
    replay = _replay(agent, context, request_id, payload, verb)
    if replay:
        return replay
    record, current = existing(agent, payload["memory_id"])
    until = deadline()
    reason = payload.get("reason") or f"MGP {verb}"
    answer: dict[str, Any] = {"kind": "state", "memory_id": record.external_id}
    if verb != "purge":
        answer["state"] = STATE_OF_VERB[verb]
        if current.state == STATE_OF_VERB[verb]:
            return Outcome(200, {"memory_id": record.external_id, "state": current.state})
    else:
        answer |= {"state": "purged", "purged_at": timezone.now().isoformat(), "reason": reason}
        if current.state != Memory.State.DELETED:
            step = _verb(agent, context, f"{request_id}:delete", payload, "delete", current, reason)
            outcome = finish(
                agent,
                context,
                step,
                operation="purge",
                request_id=request_id,
                answer={"kind": "state", "memory_id": record.external_id, "state": "deleted"},
                until=until,
            )
            if outcome.status != 200:
                return outcome
            current.refresh_from_db()
    proposal = _verb(agent, context, request_id, payload, verb, current, reason)
    return finish(agent, context, proposal, operation=verb, request_id=request_id, answer=answer, until=until)


def _verb(
    agent: Agent, context: dict, key: str, body: dict, verb: str, memory: Memory, reason: str
) -> Proposal:
    return _submit(
        agent,
        key,
        {
            "action": verb,
            "memory_id": memory.pk,
            "base_revision": memory.revision,
            "reason": reason[:2000],
            "policy_context": context,
        },
        digest(body),
    )


def task_json(task: MgpTask, result: dict[str, Any] | None = None) -> dict[str, Any]:
    """MGP's async-task shape; ``result`` is computed by the caller and never stored.

    A task's result holds memory content; storing it would outlive a purge.
    """
    return {
        "task_id": str(task.id),
        "operation": task.operation,
        "status": task.status,
        "request_id": task.request_id,
        "created_at": task.created_at.isoformat(),
        "updated_at": task.updated_at.isoformat(),
        "progress": 1 if task.status == MgpTask.Status.COMPLETED else 0,
        "total": 1,
        "result": result,
        "error": task.error,
        **({"message": task.message} if task.message else {}),
    }


def follow_proposal(task: MgpTask) -> dict[str, Any] | None:
    """Move a proposal's task along with its proposal; return the result if it completed."""
    proposal = task.proposal
    if proposal is None:
        return None
    if task.status in (MgpTask.Status.PENDING, MgpTask.Status.RUNNING):
        proposal.refresh_from_db(fields=["status", "outcome"])
        if proposal.status == Proposal.Status.APPLIED:
            task.status = MgpTask.Status.COMPLETED
        elif proposal.status == Proposal.Status.WITHDRAWN:
            task.status = MgpTask.Status.CANCELLED
        elif proposal.status not in OPEN:
            refusal = failure(proposal)
            task.status, task.error = (
                MgpTask.Status.FAILED,
                {"code": refusal.code, "message": refusal.message},
            )
        elif proposal.status == Proposal.Status.RELEASED:
            task.status = MgpTask.Status.RUNNING
        task.save()
    if task.status != MgpTask.Status.COMPLETED:
        return None
    try:
        return resolve_answer(task.agent, task.request["context"], task.request["answer"])
    except MgpError as error:  # e.g. purged since: the task completed, its memory is gone
        return {"error": {"code": error.code, "message": error.message}}


def cancel_task(agent: Agent, task: MgpTask, reason: str) -> MgpTask:
    """Withdraw the proposal behind a task (only the submitting agent can); a finished task stays."""
    if task.status not in (MgpTask.Status.PENDING, MgpTask.Status.RUNNING):
        return task
    if task.proposal is not None:
        try:
            withdraw_proposal(agent=agent, proposal=task.proposal)
        except DomainError as error:
            raise translate(error) from None
    task.status, task.message = MgpTask.Status.CANCELLED, (reason or "cancelled")[:500]
    if task.proposal is None:
        task.request = {}  # an import's memories are not kept once it will never run
    task.save()
    return task
