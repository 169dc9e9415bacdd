"""What the kinds acting on an existing memory share: finding it, and its compare-and-swap."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memory_core.models import Memory
from proposals.errors import BaseRevisionStale
from proposals.kinds.base import Freezing


def target_memory(freezing: Freezing) -> Memory | None:
    """Return the memory a proposal targets in the agent's tenant, with its fence, or None."""
    return (
        Memory.objects.with_fence()
        .filter(tenant_id=freezing.tenant_id, pk=freezing.payload["memory_id"])
        .first()
    )


def freeze_target(freezing: Freezing, fields: dict[str, Any]) -> None:
    """Freeze the target memory, the revision the action was written against, and its fields."""
    proposal, payload = freezing.proposal, freezing.payload
    proposal.target_id = payload["memory_id"]
    proposal.base_revision = payload["base_revision"]
    proposal.fields = fields


def refuse_stale_base(memory: Memory, base_revision: int) -> None:
    """Refuse an action written against another revision than the memory's current one."""
    if memory.revision != base_revision:
        raise BaseRevisionStale(current_revision=memory.revision)


def json_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Return proposed fields as plain JSON (datetimes as ISO 8601)."""
    out = dict(fields)
    for name in Memory.DATETIME_FIELDS:
        if isinstance(out.get(name), datetime):
            out[name] = out[name].isoformat()
    return out
