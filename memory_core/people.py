"""Memory content outside recall (the admin, proposals, Dreaming runs): through the same read policy.

A person browsing memories acts for no subject and works inside the
organisation, so the read policy sees ``own_subject: false`` and
``data_zone: internal``: restricted, deleted and fenced memories are
metadata-only, confidential ones masked, the rest raw (default rules). An
agent reading a proposal or a run is decided with its own read context
(``acting_for`` and ``data_zone``, as for ``GET /memories/{id}/``). When
several memories stand for one thing (a revision and the memory today, a
proposal and its target), the strictest view wins.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import Q
from django.utils import timezone
from django.utils.text import Truncator

from memory_core.models import Memory
from memory_core.read_policy import ReadRule, active_read_policy
from memory_core.return_modes import MASK, present

PERSON_CONTEXT = {"data_zone": "internal"}
STRICTNESS = ("raw", "summary", "masked", "metadata_only", "deny")
CONTENT_FIELDS = ("content", "dedupe_key", "state_reason")
SENSITIVITIES = tuple(Memory.Sensitivity.values)  # least to most sensitive
# Where a memory row keeps each fact the read policy decides on.
MEMORY_FACT_COLUMNS = {
    name: name for name in ("sensitivity", "scope", "type", "state", "fenced", "subject_kind", "subject_id")
}
# Frozen field names that carry memory content, and the memory field whose view each takes.
FROZEN_CONTENT = {"content": "content", "dedupe_key": "dedupe_key", "reason": "state_reason"}
# Frozen field names that are metadata in every view (ids, kinds, numbers, memory metadata).
FROZEN_METADATA = frozenset(
    {
        *(name for name in Memory.PROPOSED_FIELDS if name not in FROZEN_CONTENT),
        "relation",
        "to_memory_id",
        "to_revision",
        "to_entity_id",
        "members",
        "summariser",
    }
)


def current_memory(memory_id) -> Memory | None:
    """Return the memory as it is now, with its evidence fence, or None (not applied yet, or purged)."""
    return Memory.objects.with_fence().filter(pk=memory_id).first()


def strictest_rule(context: dict, *memories: Memory | None) -> ReadRule:
    """Return the strictest read rule a caller with ``context`` gets for any of ``memories``."""
    policy = active_read_policy()
    rules = [policy.decide(memory, context) for memory in memories if memory is not None]
    return max(rules, key=lambda rule: STRICTNESS.index(rule.mode))


def person_rule(*memories: Memory | None) -> ReadRule:
    """Return the strictest read rule a person gets for any of ``memories``."""
    return strictest_rule(PERSON_CONTEXT, *memories)


def readable_content(memory: Memory, rule: ReadRule) -> dict[str, Any]:
    """Return the content-bearing fields of ``memory`` as ``rule`` allows; none for metadata_only or deny."""
    if rule.mode in ("metadata_only", "deny"):
        return {}
    view = present(memory, rule.mode)
    return {name: view[name] for name in CONTENT_FIELDS if name in view}


@dataclass(frozen=True)
class Excerpt:
    """A statement cut short as a person may read it; ``withheld`` names the read mode that hid it."""

    text: str
    withheld: str = ""


def statement_excerpt(memory: Memory, rule: ReadRule, chars: int) -> Excerpt:
    """Excerpt ``memory``'s statement as ``rule`` shows it (``readable_content``), at most ``chars`` long.

    A view that shows no words of the statement (metadata_only and deny show
    no content, masked only ``MASK``) names its mode instead.
    """
    shown = readable_content(memory, rule)
    statement = (shown.get("content") or {}).get("statement")
    if not shown or statement == MASK:
        return Excerpt("", withheld=rule.mode)
    return Excerpt(Truncator(str(statement)).chars(chars) if statement else "")


def rows_read_in_full(columns: Mapping[str, str] = MEMORY_FACT_COLUMNS) -> Q:
    """Return a filter for the rows whose memory a person reads raw (``columns``: where each fact is).

    The read policy's own rules, in SQL (``ReadPolicy.rows_read_as``): what a
    search may match content against without telling which withheld row holds it.
    """
    return active_read_policy().rows_read_as({"raw"}, PERSON_CONTEXT, columns)


def frozen_fields_as_read(fields: dict, proposed: Memory, rule: ReadRule) -> dict[str, Any]:
    """Return a proposal's frozen fields as ``rule`` shows ``proposed`` (the memory they assert).

    Raw shows them as frozen. Any other view keeps only the metadata names
    (``FROZEN_METADATA``) and puts each content-bearing one (``FROZEN_CONTENT``)
    in the view's form: masked or summarised, absent for metadata_only and
    deny. A compaction's successor (``memory``) is shown the same way; any
    name not known here is left out, so a new frozen field is hidden until
    someone says it is metadata.
    """
    if rule.mode == "raw":
        return dict(fields)
    allowed = readable_content(proposed, rule)
    shown: dict[str, Any] = {}
    for name, value in fields.items():
        if name in FROZEN_CONTENT:
            if allowed:
                shown[name] = allowed.get(FROZEN_CONTENT[name], MASK)
        elif name == "memory" and isinstance(value, dict):
            shown[name] = frozen_fields_as_read(value, proposed, rule)
        elif name in FROZEN_METADATA:
            shown[name] = _ids_only(value) if name == "members" else value
    return shown


def _ids_only(members: Any) -> list[dict]:
    """A compaction's members by id and revision (the evidence they rest on is not metadata)."""
    if not isinstance(members, list):
        return []
    return [
        {"memory_id": member.get("memory_id"), "revision": member.get("revision")}
        for member in members
        if isinstance(member, dict)
    ]


def proposed_memory(*, fields: dict, facts: dict, current: Memory | None) -> Memory:
    """Return an unsaved memory carrying what a proposal would assert, for the read policy.

    ``fields`` are the frozen fields (create) or changes (update); ``facts``
    the policy facts frozen with them. The stricter of the proposed and the
    frozen sensitivity counts (an update lowering it does not show what it
    changes more openly). Unknown sensitivity reads as restricted, so a
    proposal whose target is gone never shows more.
    """
    subject = fields.get("subject") or {}
    named = [value for value in (fields.get("sensitivity"), facts.get("sensitivity")) if value]
    named = [value for value in named if value in SENSITIVITIES]
    sensitivity = (
        max(named, key=SENSITIVITIES.index)
        if named
        else (current.sensitivity if current else Memory.Sensitivity.RESTRICTED)
    )
    memory = Memory(
        subject_kind=subject.get("kind") or (current.subject_kind if current else ""),
        subject_id=subject.get("id") or (current.subject_id if current else ""),
        scope=fields.get("scope") or facts.get("scope") or (current.scope if current else ""),
        type=fields.get("type") or facts.get("type") or (current.type if current else ""),
        sensitivity=sensitivity,
        state=current.state if current else Memory.State.ACTIVE,
        content=fields.get("content") or {},
        dedupe_key=fields.get("dedupe_key") or "",
        state_reason=fields.get("reason") or "",
        created_at=timezone.now(),
        updated_at=timezone.now(),
    )
    memory.fenced = current.is_fenced if current else False
    return memory
