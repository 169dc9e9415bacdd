"""``create``: a new memory, its fields frozen with the defaults and checked against its registered type."""

import uuid
from typing import Any

from memory_core.content import validate_content, validate_retention
from memory_core.models import Memory
from memory_core.statements import is_statement_key, statement_key
from proposals.errors import DedupeKeyReserved
from proposals.kinds.base import Freezing, Prepared
from proposals.kinds.target import json_fields
from proposals.models import Proposal
from proposals.payloads import MemoryFields
from registrations.compiled import ActiveRegistration

_MEMORY_DEFAULTS = Memory.optional_field_defaults()


def prepare_create(freezing: Freezing) -> Prepared:
    payload = freezing.payload
    target, result = freeze_new_memory(
        freezing.proposal,
        payload["memory"],
        freezing.registration,
        derive_key=not payload.get("identified_by_client"),
    )
    return Prepared(target, result)


def freeze_new_memory(
    proposal: Proposal, memory: MemoryFields, registration: ActiveRegistration, *, derive_key: bool = True
) -> tuple[str, dict[str, Any]]:
    """Freeze the new memory's fields on ``proposal``; return the target fact and those fields.

    A memory given a ttl or an expiry but no retention policy is time-bound; one given no
    dedupe key claims the key its statement derives (``memory_core.statements``), unless
    ``derive_key`` is off: a protocol whose clients name each memory themselves.
    """
    if is_statement_key(memory.get("dedupe_key") or ""):
        raise DedupeKeyReserved()
    fields = {**_MEMORY_DEFAULTS, **json_fields(memory)}
    if (memory.get("ttl_seconds") or memory.get("expires_at")) and "retention_policy" not in memory:
        fields["retention_policy"] = Memory.RetentionPolicy.TIME_BOUND.value
    validate_content(fields["type"], fields["content"], registration)
    validate_retention(fields)
    if derive_key and not fields.get("dedupe_key"):
        fields["dedupe_key"] = statement_key(fields)
    proposal.target_id = proposal.target_id or uuid.uuid4()
    proposal.base_revision = 0
    proposal.fields = fields
    return "new", fields


def claimed_key(memory: MemoryFields) -> str:
    """The dedupe key a create of ``memory`` claims (a batch reads all their holders at once)."""
    if memory.get("dedupe_key"):
        return memory["dedupe_key"]
    return statement_key({**_MEMORY_DEFAULTS, **json_fields(memory)})
