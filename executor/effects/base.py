"""What every action kind's executor half is given and gives back (``executor.effects.EFFECTS``)."""

import uuid
from dataclasses import dataclass, field
from typing import Any

from evidence.models import EvidenceRevision
from executor.authority import Authority
from executor.models import Receipt
from memory_core.models import Memory
from proposals.models import DreamingRun, OutboxEntry, Proposal
from registrations.compiled import ActiveRegistration
from registrations.models import Registration

Outcome = Receipt.Outcome


@dataclass(frozen=True)
class Check:
    """What re-verification decided: the receipt's outcome, why, and the approvals it rests on."""

    outcome: str
    reason: str = ""
    decision_ids: list[str] = field(default_factory=list)


@dataclass
class Writes:
    """What a batch writes in bulk once every entry in it has been decided."""

    created: list[tuple[Memory, list[EvidenceRevision], str]] = field(default_factory=list)
    executed: list[tuple[Proposal, str, bool]] = field(default_factory=list)
    receipts: list[dict[str, Any]] = field(default_factory=list)
    revised: list[Memory] = field(default_factory=list)  # the memories whose revision is embedded
    worker: dict[str, Any] = field(default_factory=dict)  # the receipts' executor (host, pid, task)


@dataclass(frozen=True)
class Window:
    """The Dreaming run an entry belongs to (None: none) and the batch's locked memories."""

    run: DreamingRun | None
    memories: dict[Any, Memory]


@dataclass(frozen=True)
class RegistrationState:
    """The registration an entry runs under, and the candidate it publishes (register only)."""

    active: ActiveRegistration
    candidate: Registration | None = None


@dataclass(frozen=True)
class ApplyContext:
    """One entry of a batch with every row the batch already locked or read for it.

    ``memory`` is the target (None when missing or another tenant's);
    ``key_holders`` the other active memories holding the dedupe key it
    claims; ``members`` the locked memories a compaction moves; ``writes``
    the batch's bulk writes, which a kind's effect appends to.
    """

    entry: OutboxEntry
    proposal: Proposal
    memory: Memory | None
    evidence: list[EvidenceRevision]
    authority: Authority
    key_holders: list[Any]
    registration: RegistrationState
    window: Window
    members: dict[Any, Memory]
    writes: Writes


@dataclass(frozen=True)
class Applied:
    """What a kind's effect did: the memory the receipt's "after" describes (None: none), and the
    effects the receipt records."""

    memory: Memory | None
    effects: dict[str, Any] = field(default_factory=dict)


class Effect:
    """One action kind's executor half: its own re-checks and its write.

    ``verify`` runs after the checks every kind shares (status, digest,
    authority, Dreaming window, gates) and returns the first refusal, or None
    to apply; ``apply`` writes (or queues on ``ctx.writes`` what the batch
    writes in bulk). The other hooks default to doing nothing.
    """

    def verify(self, ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
        raise NotImplementedError

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        raise NotImplementedError

    def locked_members(self, proposal: Proposal) -> list[uuid.UUID]:
        """The memories besides the target that the batch must lock for this proposal."""
        return []

    def not_applied(self, ctx: ApplyContext) -> dict[str, Any]:
        """The effects a receipt records when the action was not applied."""
        return {}

    def release_refused(self, ctx: ApplyContext) -> None:
        """Undo what releasing this proposal held, when the executor refuses to apply it."""


CHANGE_REASON_PREFIX = "receipt:"


def change_reason(receipt_id: uuid.UUID) -> str:
    """Why a memory revision exists: the receipt that wrote it."""
    return f"{CHANGE_REASON_PREFIX}{receipt_id}"
