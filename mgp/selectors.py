"""MGP reads: get, search, export/sync and the audit stream, all through Custodian's read policy."""

import dataclasses
import json
import re
import uuid
from itertools import chain
from typing import Any

from django.db.models import Q, QuerySet

from memory_core.models import AccessEvent, Memory
from memory_core.read_policy import active_read_policy
from memory_core.recall import RecallQuery, recall
from memory_core.return_modes import present
from mgp import shapes
from mgp.models import MgpEvent, MgpRecord
from mgp.services import existing, render
from mgp.validation import MgpError
from proposals.models import Proposal
from tenancy.models import Agent

BACKEND = "custodian"
_WORD = re.compile(r"[\w-]+")
_SUFFIX = re.compile(r":(\d+|delete)$")  # a batch item's or a purge's first step's key
AUDIT_ACTIONS = {
    "create": "write",
    "update": "update",
    "expire": "expire",
    "revoke": "revoke",
    "delete": "delete",
    "purge": "purge",
    "restore": "update",
    "fence": "update",
    "revalidate": "update",
}


# MGP operations as audit actions (the audit schema's enum), for MGP events.
EVENT_ACTIONS = {
    "write": "write",
    "write/batch": "write",
    "import": "write",
    "update": "update",
    "expire": "expire",
    "revoke": "revoke",
    "delete": "delete",
    "purge": "purge",
    "search": "search",
    "get": "read",
    "export": "read",
    "sync": "read",
    "audit/query": "read",
}


def get(agent: Agent, context: dict, payload: dict) -> dict[str, Any]:
    record, _ = existing(agent, payload["memory_id"])
    return render(agent, context, record)


def _offset(token: str | None) -> int:
    if not token:
        return 0
    if not token.isdigit() or len(token) > 9:
        raise MgpError(
            "MGP_INVALID_OBJECT", "pagination_token is not one this server issued", field="pagination_token"
        )
    return int(token)


def _memory_named(row: Proposal | AccessEvent | MgpEvent) -> Any:
    """The memory an audit row is about: a proposal's target, an access event's (MGP events name none)."""
    if isinstance(row, Proposal):
        return row.target_id
    return getattr(row, "target_memory_id", None)


def _records(agent: Agent, memory_ids: list) -> dict:
    rows = MgpRecord.objects.filter(tenant_id=agent.tenant_id, memory_id__in=memory_ids)
    return {str(row.memory_id): row for row in rows}


def search(agent: Agent, context: dict, payload: dict) -> dict[str, Any]:
    """Governed recall: policy decides each item before the page is cut; views come from policy."""
    intent = payload.get("intent") or {}
    if intent:
        text = " ".join([intent.get("query_text") or "", *(intent.get("keywords") or [])]).strip()
    else:
        text = (payload.get("query") or "").strip()
    if not text:
        return {"results": []}
    types = payload.get("types") or intent.get("target_memory_types") or []
    limit = min(int(payload.get("limit") or intent.get("top_k") or 10), 50)
    cursor = None
    if payload.get("pagination_token"):
        try:
            cursor = uuid.UUID(payload["pagination_token"])
        except ValueError:
            raise MgpError("MGP_INVALID_OBJECT", "pagination_token is not one this server issued") from None
    query = RecallQuery(
        text=text[:500],
        subject=payload.get("subject"),
        scope=payload.get("scope") or intent.get("scope") or "",
        types=types,
    )
    try:
        result = recall(agent=agent, query=query, context=context, limit=limit, cursor=cursor)
        if not intent:  # MGP's query is one phrase: every term must appear (recall matches any word)
            result = _all_terms(agent, result, text)
    except Exception as error:  # an invalid cursor is the caller's mistake
        if getattr(error, "code", "") == "invalid_cursor":
            raise MgpError("MGP_INVALID_OBJECT", "pagination_token is not one this server issued") from None
        raise
    records = _records(agent, [item.memory["memory_id"] for item in result.items])
    masked_ids = [item.memory["memory_id"] for item in result.items if item.return_mode == "masked"]
    masked = shapes.stored_content(agent.tenant_id, masked_ids) if masked_ids else {}
    words = {word.lower() for word in _WORD.findall(text)}
    results = []
    for item in result.items:
        record = records.get(item.memory["memory_id"])
        external = record.external_id if record else item.memory["memory_id"]
        memory = shapes.mgp_memory(
            item.memory,
            item.return_mode,
            external_id=external,
            record=record,
            tenant_name=agent.tenant.name,
            masked_source=masked.get(item.memory["memory_id"]),
        )
        mode = item.return_mode
        if mode == "raw":
            statement = memory["content"].get("statement", "").lower()
            matched = sorted(word for word in words if word in statement)
            explanation = (
                ", ".join(
                    f"{name} {value.get('contribution', 0):.3f}"
                    for name, value in item.explanation.items()
                    if isinstance(value, dict) and value.get("contribution")
                )
                or f"Lexical match, score {item.score:.3f}."
            )
        else:
            matched = []
            explanation = f"Result {mode.replace('_', ' ')} due to policy."
        results.append(
            {
                "memory": memory,
                "score": item.score,
                "score_kind": "backend_local",
                "backend_origin": BACKEND,
                "retrieval_mode": "lexical",
                "return_mode": mode,
                "redaction_info": shapes.redaction_info(mode, item.rule),
                "consumable_text": shapes.consumable_text(memory),
                "matched_terms": matched,
                "explanation": explanation,
            }
        )
    data: dict[str, Any] = {"results": results}
    if result.next_cursor:
        data["next_token"] = str(result.next_cursor)
    return data


def _all_terms(agent: Agent, result, text: str):
    """Keep the items whose stored text holds every query term (decided server-side, never shown)."""
    terms = [term for term in text.lower().split() if term]
    ids = [item.memory["memory_id"] for item in result.items]
    stored = {
        str(pk): json.dumps(shapes.from_content(content), ensure_ascii=False).lower()
        for pk, content in Memory.objects.filter(tenant_id=agent.tenant_id, pk__in=ids).values_list(
            "pk", "content"
        )
    }
    items = [
        item for item in result.items if all(t in stored.get(item.memory["memory_id"], "") for t in terms)
    ]
    return dataclasses.replace(result, items=items)


def export(agent: Agent, context: dict, payload: dict, *, sync: bool = False) -> dict[str, Any]:
    """The tenant's memories, oldest first, each in the view the read policy allows (denied: left out)."""
    offset = _offset(
        payload.get("cursor") if sync and payload.get("cursor") else payload.get("pagination_token")
    )
    limit = min(int(payload.get("limit") or 50), 500)
    rows = Memory.objects.with_fence().filter(tenant_id=agent.tenant_id)
    if not payload.get("include_inactive"):
        rows = rows.filter(state=Memory.State.ACTIVE)
    page = list(rows.order_by("created_at", "id")[offset : offset + limit + 1])
    more, page = len(page) > limit, page[:limit]
    policy = active_read_policy()
    records = _records(agent, [memory.pk for memory in page])
    memories = []
    for memory in page:
        rule = policy.decide(memory, context)
        if rule.mode == "deny":
            continue
        record = records.get(str(memory.pk))
        view = present(memory, rule.mode)
        memories.append(
            shapes.mgp_memory(
                view,
                rule.mode,
                external_id=record.external_id if record else str(memory.pk),
                record=record,
                masked_source=memory.content,
                tenant_name=agent.tenant.name,
            )
        )
    data: dict[str, Any] = {"memories": memories}
    position = str(offset + len(page))
    if more:
        data["next_token"] = position
    if sync:
        data["cursor"] = position
    return data


def audit(agent: Agent, payload: dict) -> dict[str, Any]:
    """One MGP event stream over this tenant's proposals (and their receipts) and access events."""
    offset, limit = _offset(payload.get("pagination_token")), min(int(payload.get("limit") or 50), 500)
    proposals, reads, events_ = _audit_sources(agent, payload)
    window = offset + limit + 1
    events = sorted(
        chain(
            ((p.created_at, str(p.id), p) for p in proposals.order_by("created_at", "id")[:window]),
            ((e.created_at, str(e.id), e) for e in reads.order_by("created_at", "id")[:window]),
            ((r.created_at, str(r.id), r) for r in events_.order_by("created_at", "id")[:window]),
        ),
        key=lambda entry: (entry[0], entry[1]),
    )[offset:window]
    more, events = len(events) > limit, events[:limit]
    targets = [target for _, _, row in events if (target := _memory_named(row))]
    records = _records(agent, targets)
    out = [
        _proposal_event(row, records)
        if isinstance(row, Proposal)
        else _mgp_event(row)
        if isinstance(row, MgpEvent)
        else _read_event(row, records)
        for _, _, row in events
    ]
    data: dict[str, Any] = {"events": out}
    if more:
        data["next_token"] = str(offset + limit)
    return data


def _audit_sources(agent: Agent, payload: dict) -> tuple[QuerySet, QuerySet, QuerySet]:
    """The tenant's proposals, access events and MGP events, narrowed by the query's filters (ANDed)."""
    proposals = Proposal.objects.filter(tenant_id=agent.tenant_id).select_related("submitted_by")
    reads = AccessEvent.objects.filter(tenant_id=agent.tenant_id).select_related("agent")
    mgp_events = MgpEvent.objects.filter(tenant_id=agent.tenant_id).select_related("agent")
    if actor := payload.get("actor_id"):
        proposals = proposals.filter(submitted_by__name=actor)
        reads, mgp_events = reads.filter(agent__name=actor), mgp_events.filter(agent__name=actor)
    if correlation := payload.get("correlation_id"):
        proposals = proposals.filter(policy_context__correlation_id=correlation)
        reads, mgp_events = (
            reads.filter(correlation_id=correlation),
            mgp_events.filter(correlation_id=correlation),
        )
    if request_id := payload.get("request_id"):
        key = f"mgp:{request_id}"
        proposals = proposals.filter(Q(idempotency_key=key) | Q(idempotency_key__startswith=f"{key}:"))
        reads = reads.filter(policy_context__mgp_request_id=request_id)
        mgp_events = mgp_events.filter(request_id=request_id)
    if external := payload.get("target_memory_id"):
        record = MgpRecord.objects.filter(tenant_id=agent.tenant_id, external_id=external).first()
        target = record.memory_id if record else _uuid_or_none(external)
        proposals, reads = proposals.filter(target_id=target), reads.filter(target_memory_id=target)
        mgp_events = mgp_events.filter(target=external)
    if action := payload.get("action"):
        proposals = proposals.filter(action__in=[v for v, mgp in AUDIT_ACTIONS.items() if mgp == action])
        read_action = {"search": AccessEvent.Action.SEARCH, "read": AccessEvent.Action.GET}.get(action)
        reads = reads.filter(action=read_action) if read_action else reads.none()
        mgp_events = mgp_events.filter(
            operation__in=[op for op, mgp in EVENT_ACTIONS.items() if mgp == action]
        )
    return proposals, reads, mgp_events


def _uuid_or_none(value: str):
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def _external(records: dict, memory_id) -> str:
    record = records.get(str(memory_id))
    return record.external_id if record else str(memory_id or "__none__")


def _context(stored: dict, actor: str) -> dict[str, Any]:
    context = {key: value for key, value in (stored or {}).items() if key != "mgp_request_id"}
    subject = context.get("acting_for_subject") or {"kind": "agent", "id": actor}
    if "id_hmac" in subject:  # access events keep subject ids only as keyed digests
        subject = {"kind": subject.get("kind") or "custom", "id": f"hmac:{subject['id_hmac']}"}
    context["acting_for_subject"] = subject
    context.setdefault("actor_agent", actor)
    context.setdefault("requested_action", "read")
    return context


def _proposal_event(proposal: Proposal, records: dict) -> dict[str, Any]:
    actor = proposal.submitted_by.name
    context = _context(proposal.policy_context, actor)
    allowed = proposal.status not in (Proposal.Status.DENIED, Proposal.Status.REJECTED)
    key = proposal.idempotency_key
    event = {
        "event_id": f"proposal:{proposal.id}",
        "timestamp": proposal.created_at.isoformat(),
        "request_id": _SUFFIX.sub("", key[4:]) if key.startswith("mgp:") else key,
        "actor": {"kind": "agent", "id": actor},
        "action": AUDIT_ACTIONS.get(proposal.action, "update"),
        "target_memory_id": _external(records, proposal.target_id),
        "policy_context": context,
        "decision": {
            "decision": "allow" if allowed else "deny",
            "reason_code": (proposal.reason_codes or [proposal.status])[0],
            "applied_rules": [proposal.matched_rule] if proposal.matched_rule else [],
            "return_mode": "raw" if allowed else "metadata_only",
        },
        "backend": BACKEND,
        "lineage_refs": [],
    }
    if context.get("correlation_id"):
        event["correlation_id"] = context["correlation_id"]
    return event


def _mgp_event(row: MgpEvent) -> dict[str, Any]:
    context = _context(row.policy_context, row.agent.name)
    bulk = row.operation in ("export", "sync")
    event: dict[str, Any] = {
        "event_id": f"mgp:{row.id}",
        "timestamp": row.created_at.isoformat(),
        "request_id": row.request_id or str(row.id),
        "actor": {"kind": "agent", "id": row.agent.name},
        "action": EVENT_ACTIONS.get(row.operation, "read"),
        "target_memory_id": "__export__" if bulk else row.target or "__none__",
        "policy_context": context,
        "decision": {
            "decision": "allow" if row.allowed else "deny",
            "reason_code": row.code,
            "applied_rules": [row.reason] if row.reason else [],
            "return_mode": "raw" if row.allowed else "metadata_only",
        },
        "backend": BACKEND,
        "lineage_refs": [],
    }
    if row.result_count is not None:
        event["result_count"] = row.result_count
    if row.correlation_id:
        event["correlation_id"] = row.correlation_id
    return event


def _read_event(access: AccessEvent, records: dict) -> dict[str, Any]:
    actor = access.agent.name if access.agent else "custodian"
    context = _context(access.policy_context, actor)
    search = access.action == AccessEvent.Action.SEARCH
    ok = access.outcome == AccessEvent.Outcome.OK
    event: dict[str, Any] = {
        "event_id": f"access:{access.id}",
        "timestamp": access.created_at.isoformat(),
        "request_id": (access.policy_context or {}).get("mgp_request_id") or str(access.id),
        "actor": {"kind": "agent", "id": actor},
        "action": "search" if search else "read",
        "target_memory_id": "__search__" if search else _external(records, access.target_memory_id),
        "policy_context": context,
        "decision": {
            "decision": "allow" if ok else "deny",
            "reason_code": access.outcome,
            "applied_rules": [f"read-policy:{access.policy_fingerprint[:12]}"],
            "return_mode": "raw" if ok else "metadata_only",
        },
        "backend": BACKEND,
        "lineage_refs": [],
    }
    if access.correlation_id:
        event["correlation_id"] = access.correlation_id
    return event
