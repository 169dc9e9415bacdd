"""Memory content as people see it outside the API (the admin): through the same read policy.

A person browsing memories acts for no subject and works inside the
organisation, so the read policy sees ``own_subject: false`` and
``data_zone: internal``: restricted, deleted and fenced memories are
metadata-only, confidential ones masked, the rest raw (default rules). When
several memories stand for one thing (a revision and the memory today, a
proposal and its target), the strictest view wins.
"""

from typing import Any

from django.utils import timezone

from memory_core.models import Memory
from memory_core.read_policy import ReadRule, active_read_policy
from memory_core.return_modes import present

PERSON_CONTEXT = {"data_zone": "internal"}
STRICTNESS = ("raw", "summary", "masked", "metadata_only", "deny")
CONTENT_FIELDS = ("content", "dedupe_key", "state_reason")


def current_memory(memory_id) -> Memory | None:
    """Return the memory as it is now, with its evidence fence, or None (not applied yet, or purged)."""
    return Memory.objects.with_fence().filter(pk=memory_id).first()


def person_rule(*memories: Memory | None) -> ReadRule:
    """Return the strictest read rule a person gets for any of ``memories``."""
    policy = active_read_policy()
    rules = [policy.decide(memory, PERSON_CONTEXT) for memory in memories if memory is not None]
    return max(rules, key=lambda rule: STRICTNESS.index(rule.mode))


def readable_content(memory: Memory, rule: ReadRule) -> dict[str, Any]:
    """Return the content-bearing fields of ``memory`` as ``rule`` allows; none for metadata_only or deny."""
    if rule.mode in ("metadata_only", "deny"):
        return {}
    view = present(memory, rule.mode)
    return {name: view[name] for name in CONTENT_FIELDS if name in view}


def proposed_memory(*, fields: dict, facts: dict, current: Memory | None) -> Memory:
    """Return an unsaved memory carrying what a proposal would assert, for the read policy.

    ``fields`` are the frozen fields (create) or changes (update); ``facts``
    the policy facts frozen with them. Unknown sensitivity reads as
    restricted, so a proposal whose target is gone never shows more.
    """
    subject = fields.get("subject") or {}
    memory = Memory(
        subject_kind=subject.get("kind") or (current.subject_kind if current else ""),
        subject_id=subject.get("id") or (current.subject_id if current else ""),
        scope=fields.get("scope") or facts.get("scope") or (current.scope if current else ""),
        type=fields.get("type") or facts.get("type") or (current.type if current else ""),
        sensitivity=fields.get("sensitivity")
        or facts.get("sensitivity")
        or (current.sensitivity if current else Memory.Sensitivity.RESTRICTED),
        state=current.state if current else Memory.State.ACTIVE,
        content=fields.get("content") or {},
        dedupe_key=fields.get("dedupe_key") or "",
        state_reason=fields.get("reason") or "",
        created_at=timezone.now(),
        updated_at=timezone.now(),
    )
    memory.fenced = current.is_fenced if current else False
    return memory
