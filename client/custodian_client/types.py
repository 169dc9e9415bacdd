"""The shapes Custodian answers with, for type checkers (plain dicts at run time)."""

from __future__ import annotations

from typing import Any, TypedDict


class Evidence(TypedDict, total=False):
    evidence_id: str
    revision: int
    content: Any
    content_hash: str
    status: str
    status_reason: str
    created_at: str


class Proposal(TypedDict, total=False):
    id: str
    version: int
    action: str
    memory_id: str
    base_revision: int | None
    status: str
    outcome: str
    classification: str
    required_approvals: int
    matched_rule: str
    reason_codes: list[str]
    policy_version: str
    policy_fingerprint: str
    action_digest: str
    review_deadline: str | None
    fields: dict[str, Any]
    evidence: list[dict[str, Any]]
    policy_context: dict[str, Any]
    rationale: str
    submitted_by: str
    created_at: str
    updated_at: str


class BatchItemResult(TypedDict, total=False):
    index: int
    idempotency_key: str
    status: int  # 201 created, 200 replayed, or the item's 4xx
    replayed: bool
    proposal: Proposal
    problem: dict[str, Any]  # problem+json, when status is 4xx


class BatchResult(TypedDict):
    results: list[BatchItemResult]
    created: int
    replayed: int
    refused: int


class Receipt(TypedDict, total=False):
    id: str
    seq: int
    proposal_id: str
    outcome: str
    reason: str
    memory_id: str
    before_revision: int | None
    after_revision: int | None
    hash: str


class MemoryRead(TypedDict):
    memory: dict[str, Any]
    return_mode: str
    rule: str
    consumable_text: str


class RecallResult(TypedDict):
    recall_id: str
    results: list[dict[str, Any]]
    next_cursor: str | None
    weights_version: str


class Feedback(TypedDict):
    feedback_id: int
    recall_id: str
    memory_id: str
    revision: int
    verdict: str
    created_at: str


class Remembered(TypedDict):
    """What one ``remember`` call came to.

    ``status``: ``stored`` (the receipt says applied), ``pending_review`` (nothing stored until a
    reviewer approves), ``queued`` (allowed, no receipt within the wait), ``duplicate`` (an active
    memory already says it: ``memory_id`` names it, nothing new stored), else the receipt's
    outcome, or how the proposal closed without one (``withdrawn``, ``expired``…).
    """

    status: str
    proposal_id: str | None
    memory_id: str | None
    proposal: Proposal | None
    receipt: Receipt | None
