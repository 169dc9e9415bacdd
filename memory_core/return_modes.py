"""Render a memory in the view the read policy chose: raw, summary, masked or metadata_only.

The masked view hides every string and redacts the personal data that the admission
firewall's detectors find in what it keeps (keys and numbers).

Every view is built from an allow-list of fields, so nothing is shown that
a mode did not ask for. ``consumable_text`` (what an agent may paste into a
prompt) always comes from the transformed view, never from the raw memory;
MGP's reference gateway leaks the raw statement next to a masked item.
"""

from typing import Any

from admission import redact_personal
from memory_core.models import Memory

MASK = "***"


def present(memory: Memory, mode: str, *, evidence: list[dict] | None = None) -> dict[str, Any]:
    """Return the memory as ``mode`` allows (``mode`` is never ``deny`` here)."""
    view = _metadata(memory)
    if mode == "raw":
        view.update(
            content=memory.content,
            dedupe_key=memory.dedupe_key,
            state_reason=memory.state_reason,
            evidence=evidence or [],
        )
    elif mode == "masked":
        view.update(
            content=_mask(memory.content), dedupe_key=_mask(memory.dedupe_key) if memory.dedupe_key else ""
        )
        view["state_reason"] = MASK if memory.state_reason else ""
    elif mode == "summary":
        text = _summary(memory)
        view.update(content={"statement": text, "summary": text})
    view["consumable_text"] = consumable_text(view, mode)
    return view


def consumable_text(view: dict, mode: str) -> str:
    if mode == "metadata_only":
        return f"{view['type']} memory (metadata only)"
    return str(view["content"].get("statement", ""))


def matched_terms(memory: Memory, query: str, mode: str) -> list[str]:
    """Query terms found in the statement; empty for any view that hides text."""
    if mode != "raw" or not query:
        return []
    statement = memory.statement.lower()
    return sorted({term for term in query.lower().split() if term in statement})


def visible_text(memory: Memory, mode: str) -> str:
    """The text a view shows of a memory (what ranking may match on for an item served so)."""
    if mode == "raw":
        return f"{memory.statement} {(memory.content or {}).get('summary') or ''}"
    if mode == "summary":
        return _summary(memory)
    return ""


def _metadata(memory: Memory) -> dict[str, Any]:
    return {
        "memory_id": str(memory.id),
        "subject": {"kind": memory.subject_kind, "id": memory.subject_id},
        "scope": memory.scope,
        "type": memory.type,
        "state": "fenced" if memory.is_fenced else memory.state,
        "lifecycle_state": memory.state,
        "fenced": memory.is_fenced,
        "revision": memory.revision,
        "sensitivity": memory.sensitivity,
        "confidence": memory.confidence,
        "retention_policy": memory.retention_policy,
        "created_at": memory.created_at.isoformat(),
        "updated_at": memory.updated_at.isoformat(),
        "expires_at": _iso(memory.expires_at),
        "valid_from": _iso(memory.valid_from),
        "valid_to": _iso(memory.valid_to),
    }


def _summary(memory: Memory) -> str:
    """The author's short summary if there is one; otherwise a placeholder, never the statement."""
    summary = (memory.content or {}).get("summary")
    if isinstance(summary, str) and summary.strip():
        return summary
    return f"A {memory.type.replace('_', ' ')} about a {memory.subject_kind} (summary withheld)"


def _mask(value: Any) -> Any:
    """Mask every string; keep the shape (keys, numbers, booleans) less any personal data in it.

    A key or a number can be an email address, a phone or a card number as well as a string
    can: the admission firewall's personal-data spans are redacted in them.
    """
    if isinstance(value, str):
        return MASK
    if isinstance(value, dict):
        return {redact_personal(str(key), MASK): _mask(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask(item) for item in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return MASK if redact_personal(str(value), MASK) != str(value) else value
    return value


def _iso(value) -> str | None:
    return value.isoformat() if value else None
