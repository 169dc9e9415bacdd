"""What an auditor reads about receipts: one sentence per row of the list.

Memory content reaches the page only through the read policy for a person
(``memory_core.people``): the strictest view of what the receipt wrote and
of the memory today wins, so a hidden statement is never excerpted.
"""

from collections.abc import Iterable

from executor.models import Receipt
from memory_core.models import Memory
from proposals.people import change_summary
from reviews.models import ReviewDecision

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
