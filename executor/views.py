"""The receipt fragment of the review UI (receipts belong to the executor)."""

import uuid
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from executor.models import Receipt
from executor.presenters import receipt_links
from memory_core.selectors import memory_history, memory_or_none
from proposals.errors import ProposalNotFound
from reviews.selectors import proposal_for_review


@login_required
def receipt_panel(request: HttpRequest, proposal_id: uuid.UUID) -> HttpResponse:
    """Show the proposal's latest receipt (linked for who may audit it); poll every 2 s until there is one."""
    try:
        proposal = proposal_for_review(user=request.user, proposal_id=proposal_id)
    except ProposalNotFound:
        raise Http404("No such proposal") from None
    receipt = Receipt.objects.filter(proposal=proposal).order_by("-seq").first()
    history: Iterable[Any] = ()
    link = None
    if receipt is not None:
        link = receipt_links(request.user, [receipt])[str(receipt.pk)]
        # The receipt and the proposal's new status commit together: read the status after
        # the receipt, or a commit landing between the two reads shows a stale status.
        proposal.refresh_from_db(fields=["status", "outcome"])
        memory = memory_or_none(tenant_id=proposal.tenant_id, memory_id=proposal.target_id)
        history = memory_history(memory=memory) if memory else []
    context = {"proposal": proposal, "receipt": receipt, "receipt_link": link, "history": history}
    return render(request, "executor/_receipt_panel.html", context)
