"""Translate between MGP's memory object and Custodian's memory fields and views.

MGP content is open; Custodian's is closed per type. Fields the type
declares stay where they are, the rest travel in ``content.attributes``;
content without a statement (MGP's free types) gets one derived from its
values, marked so that it is dropped again on the way out. Every view is
built from Custodian's policy view (``memory_core.return_modes.present``),
never from the raw row, so a masked or metadata-only item cannot leak.
"""

from datetime import datetime, timedelta
from typing import Any

from django.utils.dateparse import parse_datetime

from memory_core.models import Memory
from registrations.selectors import active_registration

DERIVED = "mgp:derived_statement"
MASK = "***"
# MGP source kinds → Custodian evidence kinds.
EVIDENCE_KIND = {
    "chat": "conversation",
    "human": "conversation",
    "tool": "tool_result",
    "system": "tool_result",
    "document": "document",
    "external": "document",
}


def to_content(tenant_id: Any, memory_type: str, content: dict[str, Any]) -> dict[str, Any]:
    """MGP content as the tenant's registered schema for ``memory_type`` takes it."""
    registration = active_registration(tenant_id=tenant_id)
    if memory_type not in registration.document["types"]:
        return dict(content)  # refused at submission as unregistered
    declared = set(registration.entry(memory_type)["schema"].get("properties", {})) - {"attributes"}
    out = {key: value for key, value in content.items() if key in declared}
    extra = {key: value for key, value in content.items() if key not in declared}
    # A declared name carrying another shape (MGP content is open) stays as it came, among the extras.
    for problem in registration.content_problems(memory_type, {**out, "statement": "x"}):
        key = problem["path"].split("/")[2] if problem["path"].count("/") >= 2 else ""
        if key in out and key != "statement":
            extra[key] = out.pop(key)
    statement = out.get("statement")
    if not (isinstance(statement, str) and statement.strip()):
        values = "; ".join(f"{key}: {value}" for key, value in extra.items()) or f"{memory_type} memory"
        out["statement"] = values[:4000]
        extra[DERIVED] = True
    if extra:
        out["attributes"] = [{"key": key, "value": value} for key, value in extra.items()]
    return out


def from_content(content: dict[str, Any]) -> dict[str, Any]:
    out = dict(content)
    pairs = out.pop("attributes", None) or []
    attributes = (
        {pair["key"]: pair.get("value") for pair in pairs if isinstance(pair, dict) and "key" in pair}
        if isinstance(pairs, list)
        else {}
    )
    if attributes.pop(DERIVED, False):
        out.pop("statement", None)
    out.update(attributes)
    return out


def parse_time(value: str | None) -> datetime | None:
    return parse_datetime(value.replace("Z", "+00:00")) if value else None


def memory_fields(tenant_id: Any, memory: dict[str, Any], *, dedupe_key: str = "") -> dict[str, Any]:
    """Custodian's proposed fields for an MGP memory object (already schema-valid)."""
    fields: dict[str, Any] = {
        "subject": memory["subject"],
        "scope": memory["scope"],
        "type": memory["type"],
        "content": to_content(tenant_id, memory["type"], memory["content"]),
    }
    for name in ("sensitivity", "confidence"):
        if name in memory:
            fields[name] = memory[name]
    retention = memory.get("retention_policy")
    if retention:
        fields["retention_policy"] = retention
    ttl = memory.get("ttl_seconds") or None
    if ttl:
        fields["ttl_seconds"] = ttl
        created = parse_time(memory.get("created_at"))
        if created:  # MGP: created_at is the TTL base
            fields["expires_at"] = created + timedelta(seconds=ttl)
    for name in ("valid_from", "valid_to"):
        if memory.get(name):
            fields[name] = parse_time(memory[name])
    if dedupe_key:
        fields["dedupe_key"] = dedupe_key[:256]
    return fields


def candidate_memory(candidate: dict[str, Any], memory_id: str, now: str) -> dict[str, Any]:
    """MGP's candidate as a memory object (the server assigns id and created_at)."""
    content = dict(candidate.get("content") or {})
    content.setdefault("statement", candidate["statement"])
    memory = {
        "memory_id": memory_id,
        "subject": candidate["subject"],
        "scope": candidate["scope"],
        "type": candidate["proposed_type"],
        "content": content,
        "source": candidate["source"],
        "created_at": now,
    }
    for name in ("confidence", "sensitivity", "retention_policy", "ttl_seconds", "extensions"):
        if name in candidate:
            memory[name] = candidate[name]
    return memory


def mgp_memory(
    view: dict[str, Any],
    mode: str,
    *,
    external_id: str,
    record,
    tenant_name: str,
    masked_source: dict | None = None,
) -> dict:
    """An MGP memory object from a Custodian policy view (``present``'s output) in ``mode``.

    A masked view masks the attribute pairs' keys too; MGP keeps field names,
    so a masked item is masked again here from ``masked_source`` (the stored
    content: every string leaf becomes ``***``, field names stay).
    """
    state = view.get("lifecycle_state", "active")
    if mode == "metadata_only":
        text = f"{view['type']} metadata only"
        content: dict[str, Any] = {"statement": text, "summary": text}
    elif mode == "masked" and masked_source is not None:
        content = _mask(from_content(masked_source))
    else:
        content = from_content(view.get("content") or {})
    source = dict((record.source if record else None) or {"kind": "system", "ref": "custodian"})
    if mode != "raw":
        source["ref"] = MASK
    out: dict[str, Any] = {
        "memory_id": external_id,
        "subject": view["subject"],
        "scope": view["scope"],
        "type": view["type"],
        "content": content,
        "source": source,
        "created_at": view["created_at"],
        "updated_at": view["updated_at"],
        "confidence": view["confidence"],
        "sensitivity": view["sensitivity"],
        "retention_policy": view["retention_policy"],
        "evidence": [],
        "evidence_refs": [f"{item['evidence_id']}@{item['revision']}" for item in view.get("evidence") or []]
        if mode == "raw"
        else [],
        "extensions": dict((record.extensions if record else None) or {}) if mode == "raw" else {},
        "backend_ref": {
            "tenant_id": tenant_name,
            "mgp_state": state,
            "custodian_memory_id": view["memory_id"],
            "revision": view["revision"],
            "fenced": view.get("fenced", False),
            "policy_view": mode,
        },
    }
    for name in ("valid_from", "valid_to"):
        if view.get(name):
            out[name] = view[name]
    return out


def _mask(value: Any) -> Any:
    if isinstance(value, str):
        return MASK
    if isinstance(value, dict):
        return {key: _mask(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask(item) for item in value]
    return value


def stored_content(tenant_id: Any, memory_ids: list) -> dict[str, dict]:
    """The stored content of the given memories (only ever masked before it is shown)."""
    rows = Memory.objects.filter(tenant_id=tenant_id, pk__in=memory_ids).values_list("pk", "content")
    return {str(pk): content for pk, content in rows}


def consumable_text(memory: dict[str, Any]) -> str:
    """Prompt-safe text of the transformed memory (never of the stored one)."""
    content = memory["content"]
    for name in ("statement", "summary", "preference", "fact"):
        value = content.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return ", ".join(f"{key}: {value}" for key, value in sorted(content.items()))


def redaction_info(mode: str, rule: str) -> dict[str, Any]:
    if mode == "raw":
        return {"policy_view": "raw"}
    fields = (
        ["content"] if mode != "metadata_only" else ["content", "extensions", "evidence", "evidence_refs"]
    )
    info: dict[str, Any] = {
        "policy_view": mode,
        "reason_code": rule,
        "transformed_fields": fields,
        "explanation": f"Custodian's read policy (rule {rule}) serves this memory {mode.replace('_', ' ')}.",
    }
    if mode == "summary":
        info["summary_generated"] = True
    else:
        info["masked_fields"] = fields
    return info


def decision_for(mode: str) -> str:
    return {"raw": "allow", "summary": "summarize", "masked": "redact", "metadata_only": "redact"}.get(
        mode, "deny"
    )


def memory_state(memory: Memory) -> str:
    return memory.state
