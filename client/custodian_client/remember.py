"""One-call remember: the defaults every Custodian adapter shares, and what the answer means.

A remember registers the text as evidence, proposes a ``create`` citing it, and waits a bounded
time for the executor's receipt. The steps are written once here, as a generator that yields
each request (:class:`~custodian_client._core.Call`) or receipt wait (:class:`ReceiptWait`) and
is sent back its answer, so the sync client, the async client and the MCP server only differ
in how they perform the I/O.

``REMEMBER_DEFAULTS`` is the one set of defaults the Python SDK, the MCP server and the
TypeScript SDK (in camelCase) share. Three defaults depend on the call itself and so are rules,
not values: the evidence text is the remembered text, the evidence reference is
``evidence_ref_prefix`` followed by a fresh uuid4, and whom the agent acts for is ``about``.
"""

from __future__ import annotations

import uuid
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from custodian_client import _core
from custodian_client._core import Call
from custodian_client.errors import CustodianError, ProposalClosed, WaitTimeout
from custodian_client.types import Proposal, Receipt, Remembered

REMEMBER_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "type": "preference",
        "scope": "user",
        "evidence_kind": "conversation",
        "evidence_ref_prefix": "remember/",
        "consent_basis": "explicit",
        "risk_level": "low",
        "wait_seconds": 30.0,
    }
)
DUPLICATE_CODE = "duplicate_of_active_memory"
# Classifications the executor applies without a reviewer: worth waiting for their receipt.
AUTO_CLASSIFICATIONS = frozenset({"auto_apply", "policy_gated"})


def parse_subject(spec: str, name: str = "about") -> dict[str, str]:
    """Return ``{"kind", "id"}`` for ``"kind:id"``; raise ``ValueError`` naming ``name`` otherwise."""
    kind, _, subject_id = spec.partition(":")
    if not (kind.strip() and subject_id.strip()):
        raise ValueError(f"{name} must be 'kind:id' (e.g. 'user:pm-alice'), not {spec!r}")
    return {"kind": kind, "id": subject_id}


@dataclass(frozen=True)
class ReceiptWait:
    """A step of the flow: wait up to ``timeout`` seconds for the proposal's receipt."""

    proposal_id: str
    timeout: float


@dataclass(frozen=True)
class RememberRequest:
    """Everything one remember sends, fixed before the first request (and so on its retries)."""

    memory: dict[str, Any]
    evidence_kind: str
    evidence_ref: str
    evidence_text: str
    policy_context: dict[str, Any]
    wait: float

    def evidence_call(self) -> Call:
        return _core.register_evidence(self.evidence_kind, self.evidence_ref, {"text": self.evidence_text})

    def proposal_call(self, evidence: Mapping[str, Any]) -> Call:
        return _core.propose(
            "create", memory=self.memory, evidence=[evidence], policy_context=self.policy_context
        )


def remember_request(
    text: str,
    *,
    about: str,
    type: str = REMEMBER_DEFAULTS["type"],
    scope: str = REMEMBER_DEFAULTS["scope"],
    evidence_text: str | None = None,
    evidence_kind: str = REMEMBER_DEFAULTS["evidence_kind"],
    evidence_ref: str | None = None,
    dedupe_key: str | None = None,
    acting_for: str | None = None,
    consent_basis: str = REMEMBER_DEFAULTS["consent_basis"],
    risk_level: str = REMEMBER_DEFAULTS["risk_level"],
    wait: float = REMEMBER_DEFAULTS["wait_seconds"],
) -> RememberRequest:
    """Build a remember from its arguments and the shared defaults; a malformed subject raises.

    ``acting_for`` None means ``about``; an empty string sends no ``acting_for_subject`` (the
    agent speaks for itself). The server checks the grant either way: it is a claim.
    """
    memory: dict[str, Any] = {
        "subject": parse_subject(about),
        "scope": scope,
        "type": type,
        "content": {"statement": text},
    }
    if dedupe_key:
        memory["dedupe_key"] = dedupe_key
    acting = about if acting_for is None else acting_for
    context: dict[str, Any] = {"consent_basis": consent_basis, "risk_level": risk_level}
    if acting:
        context = {"acting_for_subject": parse_subject(acting, "acting_for"), **context}
    return RememberRequest(
        memory=memory,
        evidence_kind=evidence_kind,
        evidence_ref=evidence_ref or f"{REMEMBER_DEFAULTS['evidence_ref_prefix']}{uuid.uuid4()}",
        evidence_text=text if evidence_text is None else evidence_text,
        policy_context=context,
        wait=wait,
    )


Step = Call | ReceiptWait


def remember_flow(request: RememberRequest) -> Generator[Step, Any, Remembered]:
    """Register, propose, wait; send each step's answer back in, or throw its error in."""
    evidence = yield request.evidence_call()
    try:
        proposal: Proposal = yield request.proposal_call(evidence)
    except CustodianError as exc:
        if (duplicate := duplicate_of(exc)) is None:
            raise
        return duplicate
    return (yield from settle_flow(proposal, request.wait))


def settle_flow(proposal: Proposal, wait: float) -> Generator[Step, Any, Remembered]:
    """Say what a submitted proposal came to, waiting up to ``wait`` seconds for its receipt."""
    if proposal.get("classification") not in AUTO_CLASSIFICATIONS:
        return remembered("pending_review", proposal)
    try:
        receipt: Receipt = yield ReceiptWait(proposal["id"], wait)
    except WaitTimeout:
        return remembered("queued", proposal)
    except ProposalClosed as exc:
        return remembered(exc.code.removeprefix("proposal_"), proposal)
    return settled(proposal, receipt)


def remembered(status: str, proposal: Proposal, receipt: Receipt | None = None) -> Remembered:
    """The answer for a proposal that exists (``memory_id`` is the id it has, or will have)."""
    memory_id = (receipt or {}).get("memory_id") or proposal.get("memory_id")
    return Remembered(
        status=status, proposal_id=proposal["id"], memory_id=memory_id, proposal=proposal, receipt=receipt
    )


def settled(proposal: Proposal, receipt: Receipt) -> Remembered:
    """``stored`` when the receipt says applied, else the receipt's outcome (nothing stored)."""
    outcome = receipt["outcome"]
    return remembered("stored" if outcome == "applied" else outcome, proposal, receipt)


def duplicate_of(exc: CustodianError) -> Remembered | None:
    """Read a ``duplicate_of_active_memory`` denial as "already stored"; None for any other error.

    Only the code and ``held_by`` are read, whichever rule found the duplicate (the same dedupe
    key and content, or the same statement); the denied proposal stays stored for audit.
    """
    if exc.status != 422 or exc.code != DUPLICATE_CODE:
        return None
    held_by = exc.body.get("held_by")
    holder = held_by[0] if isinstance(held_by, list) and held_by else held_by
    memory_id = holder.get("memory_id") if isinstance(holder, dict) else None
    return Remembered(
        status="duplicate",
        proposal_id=str(exc.body.get("proposal_id") or "") or None,
        memory_id=str(memory_id) if memory_id else None,
        proposal=None,
        receipt=None,
    )


def describe(outcome: Remembered, done: str = "stored") -> str:
    """Say in one sentence what a remember (or a forget: ``done`` is "expired"…) came to.

    The words every agent adapter answers with, so a model reads the same thing everywhere.
    """
    receipt, proposal_id = outcome["receipt"], outcome["proposal_id"]
    if receipt is not None:
        if receipt["outcome"] == "applied":
            return f"{done}: memory {receipt['memory_id']} (receipt {receipt['id']})"
        return f"not applied ({receipt['outcome']}: {receipt.get('reason', '')}), receipt {receipt['id']}"
    status = outcome["status"]
    if status == "duplicate":
        return f"already stored: memory {outcome['memory_id']} (nothing new was stored)"
    if status == "pending_review":
        needed = (outcome["proposal"] or {}).get("required_approvals", 1)
        return (
            f"pending review, proposal {proposal_id} "
            f"({needed} approval(s) needed; nothing is stored until a reviewer approves)"
        )
    if status == "queued":
        return f"allowed by policy, not applied yet: proposal {proposal_id}"
    return f"proposal {proposal_id} is {status}"
