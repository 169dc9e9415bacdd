"""Reads of receipts and the outbox, always within the caller's tenant."""

import uuid

from django.db.models import QuerySet

from core.errors import NotFound
from executor.models import Receipt
from tenancy.models import Tenant


def receipt_list(
    *, tenant: Tenant, proposal: uuid.UUID | None = None, memory: uuid.UUID | None = None
) -> QuerySet[Receipt]:
    """Return the tenant's receipts, optionally for one proposal or memory."""
    receipts = Receipt.objects.filter(tenant=tenant)
    if proposal:
        receipts = receipts.filter(proposal_id=proposal)
    if memory:
        receipts = receipts.filter(memory_id=memory)
    return receipts


def receipt_detail(*, tenant: Tenant, receipt_id: uuid.UUID) -> Receipt:
    receipt = Receipt.objects.filter(tenant=tenant, pk=receipt_id).first()
    if receipt is None:
        raise NotFound("Receipt not found")
    return receipt
