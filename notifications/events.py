"""The events Custodian tells integrators about, and the metadata their payloads may carry.

A payload names things (ids, kinds, rules, outcomes, times), never what they say: no memory
content, statements, evidence text or proposal fields. ``METADATA_KEYS`` is the whole vocabulary;
recording anything else is a programming error, refused before a row is written.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

PENDING_REVIEW = "proposal.pending_review"
DECIDED = "proposal.decided"
EXPIRING = "proposal.expiring"
EXPIRED = "proposal.expired"
RECEIPT_WRITTEN = "receipt.written"
EVIDENCE_INVALIDATED = "evidence.invalidated"
MEMORY_FENCED = "memory.fenced"
CHAIN_VERIFICATION_FAILED = "chain.verification_failed"

EVENT_TYPES = (
    PENDING_REVIEW,
    DECIDED,
    EXPIRING,
    EXPIRED,
    RECEIPT_WRITTEN,
    EVIDENCE_INVALIDATED,
    MEMORY_FENCED,
    CHAIN_VERIFICATION_FAILED,
)

METADATA_KEYS = frozenset(
    {
        "proposal_id",
        "action",
        "memory_type",
        "rule",
        "classification",
        "status",
        "decision",
        "submitted_by",
        "review_deadline",
        "receipt_id",
        "seq",
        "outcome",
        "memory_id",
        "evidence_id",
        "evidence_revision",
        "verification_id",
        "receipts_verified",
        "problems",
    }
)
_SCALARS = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class Event:
    """Something that happened in one tenant, described by metadata only."""

    tenant_id: Any
    type: str
    data: dict[str, Any]
    occurred_at: datetime = field(default_factory=timezone.now)

    def __post_init__(self) -> None:
        if self.type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {self.type!r}")
        extra = set(self.data) - METADATA_KEYS
        if extra:
            raise ValueError(f"{self.type}: not metadata: {sorted(extra)}")
        if not all(isinstance(value, _SCALARS) for value in self.data.values()):
            raise ValueError(f"{self.type}: payload values must be scalars")

    def body(self, delivery_id: Any) -> dict[str, Any]:
        """The JSON body of a standard delivery (Standard Webhooks' type/timestamp/data shape)."""
        return {
            "id": str(delivery_id),
            "type": self.type,
            "timestamp": self.occurred_at.isoformat(),
            "tenant_id": str(self.tenant_id),
            "data": self.data,
        }
