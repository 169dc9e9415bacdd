"""What an auditor reads about receipts: one sentence per row of the list.

Memory content reaches the page only through the read policy for a person
(``memory_core.people``): the strictest view of what the receipt wrote and
of the memory today wins, so a hidden statement is never excerpted.
"""

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from executor.effects.base import CHANGE_REASON_PREFIX
from executor.models import Receipt
from memory_core.models import Memory
from proposals.models import Proposal
from proposals.people import change_summary
from reviews.models import ReviewDecision
from reviews.roles import RECEIPTS_PERM
from tenancy.selectors import admin_tenants

EXCERPT_CHARS = 90


def attach_page(receipts: Iterable[Receipt]) -> list[Receipt]:
    """Give each receipt of a page its memory now and its decisions: two queries, whatever the page size.

    Sets ``receipt.summary`` (``memory_core.people.Excerpt``) and ``receipt.decisions`` (oldest first).
    """
    receipts = list(receipts)
    memory_ids = {receipt.memory_id for receipt in receipts}
    memories = {m.pk: m for m in Memory.objects.with_fence().filter(pk__in=memory_ids)} if receipts else {}
    decision_ids = {decision_id for receipt in receipts for decision_id in receipt.decision_ids}
    decisions = (
        {
            str(d.pk): d
            for d in ReviewDecision.objects.filter(pk__in=decision_ids)
            .select_related("actor")
            .order_by("created_at")
        }
        if decision_ids
        else {}
    )
    for receipt in receipts:
        receipt.summary = change_summary(receipt.proposal, memories.get(receipt.memory_id), EXCERPT_CHARS)
        found = [decisions[str(d)] for d in receipt.decision_ids if str(d) in decisions]
        receipt.decisions = sorted(found, key=lambda decision: decision.created_at)
    return receipts


@dataclass(frozen=True)
class ReceiptLink:
    """How the review UI names a receipt; ``url``, its audit page, only for who may open it."""

    text: str  # "Receipt #<seq> · applied"
    url: str = ""


def receipt_links(user: Any, receipts: Iterable[Receipt]) -> dict[str, ReceiptLink]:
    """Name each receipt by its id, linked where ``user`` may open receipts of its tenant (one query).

    Whoever may not (no admin, no receipt permission, not their tenant) reads the same words, unlinked.
    """
    receipts = list(receipts)
    tenants = {receipt.tenant_id for receipt in receipts}
    opens = (
        set(admin_tenants(user, RECEIPTS_PERM).filter(pk__in=tenants).values_list("pk", flat=True))
        if receipts
        else set()
    )
    return {
        str(receipt.pk): ReceiptLink(
            f"Receipt #{receipt.seq} · {receipt.get_outcome_display().lower()}",
            reverse("admin:executor_receipt_change", args=[receipt.pk]) if receipt.tenant_id in opens else "",
        )
        for receipt in receipts
    }


def history_receipts(user: Any, history: Iterable[Any]) -> list[tuple[Any, ReceiptLink | None]]:
    """Pair each memory history row with the receipt that wrote it (its change reason names it).

    Two queries for the whole history: the receipts, in the rows' own tenant, and the viewer's tenants.
    """
    rows = list(history)
    written_by = {}
    for row in rows:
        reason = row.history_change_reason or ""
        if reason.startswith(CHANGE_REASON_PREFIX):
            try:
                written_by[row.pk] = str(uuid.UUID(reason.removeprefix(CHANGE_REASON_PREFIX)))
            except ValueError:
                continue
    receipts = Receipt.objects.filter(
        pk__in=set(written_by.values()), tenant_id__in={row.tenant_id for row in rows}
    )
    links = receipt_links(user, receipts) if written_by else {}
    return [(row, links.get(written_by.get(row.pk, ""))) for row in rows]


def decision_receipts(
    user: Any, proposal: Proposal, decisions: Iterable[ReviewDecision]
) -> list[tuple[ReviewDecision, list[ReceiptLink]]]:
    """Pair each decision on ``proposal`` with the receipts that counted it (two queries)."""
    decisions = list(decisions)
    receipts = (
        list(Receipt.objects.filter(tenant_id=proposal.tenant_id, proposal_id=proposal.pk).order_by("seq"))
        if decisions
        else []
    )
    links = receipt_links(user, receipts)
    return [
        (
            decision,
            [links[str(r.pk)] for r in receipts if str(decision.pk) in {str(d) for d in r.decision_ids}],
        )
        for decision in decisions
    ]
