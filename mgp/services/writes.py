"""MGP writes: every write, update and lifecycle verb becomes a Custodian proposal.

MGP's ``source`` is registered as evidence and cited with its content hash;
``request_id`` is the idempotency key; the policy engine decides. An
auto-applied proposal is waited for (``CUSTODIAN_MGP_WAIT_SECONDS``) and
answered synchronously; one that needs people becomes an MGP task.
"""

import contextlib
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from core.canonical import digest
from core.errors import DomainError
from memory_core.models import Memory
from memory_core.selectors import active_memories_with_dedupe_key
from mgp import shapes
from mgp.models import MgpRecord
from mgp.services.proposing import STATE_OF_VERB, deadline, finish, register_source, replayed, submit
from mgp.services.records import (
    Outcome,
    existing,
    live_record,
    readable,
    refuse_merge_unless_raw,
    render,
)
from mgp.validation import MgpError, validate
from proposals.models import Proposal
from proposals.services import withdraw_proposal
from tenancy.models import Agent


def write(agent: Agent, context: dict, request_id: str, payload: dict, *, key: str | None = None) -> Outcome:
    """MGP write: a create proposal, or a merge onto an existing memory as the hint says."""
    key = key or request_id
    replay = replayed(agent, context, key, payload, "write")
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
    rule = readable(context, current)
    if strategy in ("dedupe", "reinforce"):
        resolution = "deduped" if strategy == "dedupe" else "reinforced"
        return Outcome(200, render(agent, context, record, resolution))
    content = memory["content"]
    if strategy == "merge":
        refuse_merge_unless_raw(rule)
        content = _deep_merge(shapes.from_content(current.content), content)
    changes = {"content": shapes.to_content(agent.tenant_id, current.type, content)}
    for name in ("sensitivity", "confidence"):
        if strategy != "merge" and name in memory and memory[name] != getattr(current, name):
            changes[name] = memory[name]
    resolution = "merged" if strategy == "merge" else "replaced"
    change = _Change(record, current, changes, source=memory.get("source"), resolution=resolution)
    return _update(agent, context, key, payload, change)


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
    binding = register_source(agent, memory["source"])
    proposal = submit(
        agent,
        key,
        {
            "action": "create",
            "memory": fields,
            "evidence": [binding],
            "policy_context": context,
            "rationale": f"MGP write {key}",
            "identified_by_client": True,
        },
        digest(body),
    )
    try:
        with transaction.atomic():
            MgpRecord.objects.create(
                tenant_id=agent.tenant_id,
                external_id=memory["memory_id"],
                memory_id=proposal.target_id,
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


@dataclass(frozen=True)
class _Change:
    """An update of a stored memory, and what its answer says about the record."""

    record: MgpRecord
    current: Memory
    changes: dict
    source: dict | None = None  # None: the record's own
    resolution: str | None = None
    extensions: dict | None = None  # None: the record's own


def _update(agent: Agent, context: dict, key: str, body: dict, change: _Change) -> Outcome:
    record, current = change.record, change.current
    source = change.source or record.source or {"kind": "system", "ref": "mgp"}
    binding = register_source(agent, source)
    proposal = submit(
        agent,
        key,
        {
            "action": "update",
            "memory_id": current.pk,
            "base_revision": current.revision,
            "changes": change.changes,
            "evidence": [binding],
            "policy_context": context,
            "rationale": f"MGP update {key}",
        },
        digest(body),
    )
    answer = {
        "kind": "memory",
        "external_id": record.external_id,
        "resolution": change.resolution,
        "extensions": record.extensions if change.extensions is None else change.extensions,
        "source": source,
    }
    return finish(agent, context, proposal, operation="update", request_id=key, answer=answer)


# Patch fields merged one level deep onto the stored ones (MGP); the rest are replaced.
MERGED = ("content", "backend_ref", "extensions")
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
    replay = replayed(agent, context, request_id, payload, "update")
    if replay:
        return replay
    record, current = existing(agent, payload["memory_id"])
    rule = readable(context, current)
    patch = payload["patch"]
    if any(isinstance(patch.get(name), dict) for name in MERGED):
        refuse_merge_unless_raw(rule)
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
        if name in MERGED and isinstance(value, dict):
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
    change = _Change(record, current, changes, extensions=merged.get("extensions") or {})
    return _update(agent, context, request_id, payload, change)


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
    replay = replayed(agent, context, request_id, payload, verb)
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
    return submit(
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
