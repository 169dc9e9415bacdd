"""``update``: changed fields of the memory at its base revision, checked against its registered type."""

from memory_core.content import validate_content, validate_retention
from proposals.kinds.base import Freezing, Prepared
from proposals.kinds.target import freeze_target, json_fields, refuse_stale_base, target_memory


def prepare_update(freezing: Freezing) -> Prepared:
    """Freeze the changes; the result is the memory as it would be after them ({} if missing)."""
    payload = freezing.payload
    memory = target_memory(freezing)
    freeze_target(freezing, json_fields(payload["changes"]))
    if memory is None:
        return Prepared("missing")
    refuse_stale_base(memory, payload["base_revision"])
    result = {**memory.snapshot(), **freezing.proposal.fields}
    validate_content(result["type"], result["content"], freezing.registration)
    validate_retention(result)
    return Prepared("current" if memory.is_active else "inactive", result, memory)
