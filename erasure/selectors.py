"""An erasure as its requester reads it: the frozen plan, where it stands, and its certificate."""

from typing import Any

from core.errors import NotFound
from executor.models import Receipt
from proposals.models import Proposal
from tenancy.models import Agent


class ErasureNotFound(NotFound):
    code = "erasure_not_found"
    title = "No such erasure"


def erasure_for(*, agent: Agent, erasure_id: Any) -> Proposal:
    """The erasure ``agent`` asked for; any other (another agent's, another tenant's) is not found.

    An erasure names whom it is about and which memories were theirs, so only the
    agent that asked reads it here; reviewers read it in the review pages and
    auditors through its receipts.
    """
    erasure = Proposal.objects.filter(
        pk=erasure_id, tenant_id=agent.tenant_id, submitted_by=agent, action=Proposal.Action.ERASE
    ).first()
    if erasure is None:
        raise ErasureNotFound()
    return erasure


def erasure_receipts(erasure: Proposal) -> list[Receipt]:
    """The erasure's receipts in chain order: one per purged memory, then its certificate."""
    return list(Receipt.objects.filter(tenant_id=erasure.tenant_id, proposal=erasure).order_by("seq"))


def certificate_receipt(receipts: list[Receipt]) -> Receipt | None:
    """The receipt that applied the erasure (its effects hold the certificate), if it has applied."""
    for receipt in reversed(receipts):
        if (
            receipt.outcome == Receipt.Outcome.APPLIED
            and "erasure" in receipt.effects
            and (isinstance(receipt.effects["erasure"], dict))
        ):
            return receipt
    return None
