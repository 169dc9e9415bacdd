"""Receipts named in the review UI's fragments, linked to their audit page for who may open it.

The review templates show memory history and decisions, which the reviews app
renders but whose receipts belong to the executor (above it); these tags are
how those templates reach them (``executor.presenters``).
"""

from typing import Any

from django import template

from executor.presenters import ReceiptLink, decision_receipts, history_receipts

register = template.Library()


@register.simple_tag(takes_context=True)
def history_with_receipts(context: template.Context, history: Any) -> list[tuple[Any, ReceiptLink | None]]:
    """``{% history_with_receipts history as rows %}``: (history row, its receipt or None)."""
    return history_receipts(context["request"].user, history)


@register.simple_tag(takes_context=True)
def decisions_with_receipts(
    context: template.Context, decisions: Any, proposal: Any
) -> list[tuple[Any, list[ReceiptLink]]]:
    """``{% decisions_with_receipts decisions proposal as rows %}``: (decision, receipts counting it)."""
    return decision_receipts(context["request"].user, proposal, decisions)
