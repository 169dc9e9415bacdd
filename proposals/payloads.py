"""What a submission carries, as the proposal services take it: already validated and typed.

``proposals.api.ProposalSubmitInput`` builds one from an agent's JSON;
Custodian's own proposals, the demo seed and the tests build them directly.
Which keys an action needs is the serializer's rule (and the freezing step's).
"""

import uuid
from datetime import datetime
from typing import Any, Required, TypedDict

from evidence.models import EvidenceBinding


class MemoryFields(TypedDict, total=False):
    """A memory's proposed fields (create) or the ones to change (update)."""

    subject: dict[str, str]
    scope: str
    type: str
    content: dict[str, Any]
    sensitivity: str
    confidence: float
    retention_policy: str
    ttl_seconds: int | None
    expires_at: datetime | None
    valid_from: datetime | None
    valid_to: datetime | None
    dedupe_key: str


class ProposalPayload(TypedDict, total=False):
    action: Required[str]
    memory: MemoryFields  # create
    memory_id: uuid.UUID  # every other action
    base_revision: int
    changes: MemoryFields  # update
    reason: str  # lifecycle verbs, fence, revalidate, register
    entity: dict[str, Any]  # entity_*: kind, name, aliases (create); entity_id, into_entity_id (merge)
    link: dict[str, Any]  # link: relation and to_memory_id + to_revision, or to_entity_id
    compaction: dict[str, Any]  # compact: subject, scope, type, members [{memory_id, revision}], content
    registration_id: uuid.UUID  # register: the candidate to publish
    erasure: dict[str, Any]  # erase: {"subject": {"kind", "id"}}
    requested_by: int  # register, erase: the operator (user id) who asked; never one of its approvers
    evidence: list[EvidenceBinding]
    policy_context: dict[str, Any]
    rationale: str
    # Set only by the Dreaming service (no API serializer carries them): the run the action
    # belongs to, and whether the server judged it high risk.
    dreaming_run: Any
    dreaming_high_risk: bool
    # Set only by MGP's write service: MGP clients name each memory by its memory_id and settle
    # restatements with merge hints, so their creates claim no key derived from the statement.
    identified_by_client: bool
    # Set only by the observation service: the observed text and fields the candidate came from,
    # so the admission firewall reads them too (they are scanned, never stored with the proposal).
    observation: dict[str, Any]
