"""Proposals made for MGP calls: evidence from ``source``, submission, waiting, answers, and the
MGP tasks that follow a proposal waiting for people (cancelling one withdraws it)."""

import time
import uuid
from typing import Any, cast

from django.conf import settings

from core.after_response import run_pending
from core.canonical import digest
from core.errors import DomainError
from evidence.services import register_evidence
from mgp import shapes
from mgp.models import MgpRecord, MgpTask
from mgp.services.records import OPEN, Outcome, render
from mgp.validation import MgpError
from proposals.models import Proposal
from proposals.payloads import ProposalPayload
from proposals.selectors import proposal_by_idempotency_key
from proposals.services import submit_proposal, withdraw_proposal
from tenancy.models import Agent

STATE_OF_VERB = {"expire": "expired", "revoke": "revoked", "delete": "deleted"}
CONFLICT_REASONS = {"duplicate_of_active_memory", "contradicts_active_memory", "dedupe_conflict"}


def register_source(agent: Agent, source: dict) -> dict:
    """Register MGP's ``source`` as evidence: only the source, never the client's memory or request id.

    Evidence outlives a purge of the memories citing it; the MGP ids are the
    binding's to keep, and a purge's to remove.
    """
    try:
        revision = register_evidence(
            agent=agent,
            kind=shapes.EVIDENCE_KIND.get(source.get("kind", ""), "document"),
            external_ref=f"mgp:{source.get('kind')}:{source.get('ref')}#{uuid.uuid4().hex}"[:500],
            content={"mgp_source": source},
        )
    except DomainError as error:  # a secret in the source: refused before anything is stored
        raise translate(error) from None
    return {
        "evidence_id": revision.source_id,
        "revision": revision.revision,
        "content_hash": revision.content_hash,
    }


def submit(agent: Agent, key: str, payload: dict, request_hash: str) -> Proposal:
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
    """Custodian's problem codes as MGP error codes (a secret is a policy denial, with its findings)."""
    if error.code == "secret_detected":
        return MgpError("MGP_POLICY_DENIED", error.detail, reason=error.code, **error.extra)
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
    run_pending()  # the nudges this request deferred to after its response: it waits on them
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
        message = f"Proposal {proposal.id} is {proposal.status} ({', '.join(proposal.reason_codes)})"
        task = start_task(agent, context, operation, request_id, {"answer": answer}, proposal, message)
        return Outcome(202, {"task": task_json(task)})
    raise failure(proposal)


def start_task(
    agent: Agent,
    context: dict,
    operation: str,
    request_id: str,
    request: dict,
    proposal: Proposal | None = None,
    message: str = "",
) -> MgpTask:
    """Record an MGP task for ``agent``, acting for the subject its bound context names."""
    subject = context.get("acting_for_subject") or {}
    acting_for = subject if subject and subject != {"kind": "agent", "id": agent.name} else {}
    return MgpTask.objects.create(
        tenant_id=agent.tenant_id,
        agent=agent,
        subject_kind=str(acting_for.get("kind") or "")[:40],
        subject_id=str(acting_for.get("id") or "")[:200],
        operation=operation,
        request_id=request_id,
        proposal=proposal,
        request={"context": context, **request},
        message=message,
    )


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
        return {key: value for key, value in answer.items() if key != "kind"}
    raise AssertionError(answer["kind"])


def replayed(agent: Agent, context: dict, request_id: str, body: dict, operation: str) -> Outcome | None:
    proposal = proposal_by_idempotency_key(agent=agent, idempotency_key=f"mgp:{request_id}"[:200])
    if proposal is None:
        return None
    if proposal.request_hash != digest(body):
        raise MgpError("MGP_CONFLICT_UNRESOLVED", "request_id was used for another request")
    task = MgpTask.objects.filter(tenant_id=agent.tenant_id, agent=agent, proposal=proposal).first()
    if task is not None:
        result = follow_proposal(task, context)
        if task.status == MgpTask.Status.COMPLETED and result and "error" not in result:
            return Outcome(200, result)  # as the first answer would have been, had it waited long enough
        waiting = task.status in (MgpTask.Status.PENDING, MgpTask.Status.RUNNING)
        return Outcome(202 if waiting else 200, {"task": task_json(task, result)})
    if proposal.status == Proposal.Status.DENIED:
        raise denial(proposal)
    if proposal.status != Proposal.Status.APPLIED:
        raise failure(proposal)
    # Applied before: answer as the first time, from the memory as it is now.
    record = MgpRecord.objects.filter(tenant_id=agent.tenant_id, memory_id=proposal.target_id).first()
    if proposal.action in STATE_OF_VERB or proposal.action == Proposal.Action.PURGE or record is None:
        external = record.external_id if record else str(proposal.target_id)
        state = STATE_OF_VERB.get(proposal.action, "purged")
        return Outcome(200, {"memory_id": external, "state": state})
    return Outcome(200, render(agent, context, record, "created" if proposal.action == "create" else None))


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


def follow_proposal(task: MgpTask, context: dict) -> dict[str, Any] | None:
    """Move a proposal's task along with its proposal; return the result if it completed.

    The result is read now, in the view ``context`` (the caller's, bound again) allows.
    """
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
        return resolve_answer(task.agent, context, task.request["answer"])
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
