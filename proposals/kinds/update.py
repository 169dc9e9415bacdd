"""``update``: changed fields of the memory at its base revision, checked against its registered type."""

from typing import Any

from memory_core.content import validate_content, validate_retention
from memory_core.models import Memory
from memory_core.statements import is_statement_key, statement_key
from proposals.errors import DedupeKeyReserved
from proposals.kinds.base import Freezing, Prepared
from proposals.kinds.target import freeze_target, json_fields, refuse_stale_base, target_memory


def prepare_update(freezing: Freezing) -> Prepared:
    """Freeze the changes; the result is the memory as it would be after them ({} if missing)."""
    payload = freezing.payload
    if is_statement_key(payload["changes"].get("dedupe_key") or ""):
        raise DedupeKeyReserved()
    memory = target_memory(freezing)
    freeze_target(freezing, json_fields(payload["changes"]))
    if memory is None:
        return Prepared("missing")
    refuse_stale_base(memory, payload["base_revision"])
    _move_statement_key(freezing.proposal.fields, memory)
    result = {**memory.snapshot(), **freezing.proposal.fields}
    validate_content(result["type"], result["content"], freezing.registration)
    validate_retention(result)
    return Prepared("current" if memory.is_active else "inactive", result, memory)


def _move_statement_key(changes: dict[str, Any], memory: Memory) -> None:
    """A derived key follows the statement: rewording or reclassifying the memory re-derives it.

    A key the agent chose stays as it is unless the change names another.
    """
    if "dedupe_key" in changes or not is_statement_key(memory.dedupe_key):
        return
    derived = statement_key({**memory.snapshot(), **changes})
    if derived != memory.dedupe_key:
        changes["dedupe_key"] = derived
