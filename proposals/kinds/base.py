"""What every action kind's freezing half is given and gives back (``proposals.kinds.KINDS``)."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memory_core.models import Memory
from proposals.models import Proposal
from proposals.payloads import ProposalPayload
from registrations.compiled import ActiveRegistration
from tenancy.models import Agent


@dataclass(frozen=True)
class Freezing:
    """One proposal being frozen: who proposes, what they sent, under which registration."""

    proposal: Proposal
    agent: Agent
    payload: ProposalPayload
    registration: ActiveRegistration

    @property
    def tenant_id(self) -> Any:
        return self.agent.tenant_id


@dataclass(frozen=True)
class Prepared:
    """A kind's frozen action, as the rule set sees it.

    ``target`` is the target fact (new, current, inactive, missing); ``result``
    the memory as it would be once applied ({} when there is none); ``memory``
    the target memory as it is now, when the kind has one (its snapshot is the
    "before" of the escalation, its fence and expiry are facts too).
    """

    target: str
    result: dict[str, Any] = field(default_factory=dict)
    memory: Memory | None = None


# The evidence a kind is bound to when the server, not the payload, names it.
BoundEvidence = Callable[[Any, ProposalPayload], list[dict[str, Any]]]


@dataclass(frozen=True)
class KindSpec:
    """One action kind's freezing half.

    ``prepare`` sets the proposal's target, base revision and frozen fields
    and refuses what can never apply (raising its domain error);
    ``bound_evidence``, when set, replaces the payload's evidence claims.
    """

    prepare: Callable[[Freezing], Prepared]
    bound_evidence: BoundEvidence | None = None
