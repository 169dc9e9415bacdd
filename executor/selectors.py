"""Reads of receipts and the outbox, always within the caller's tenant."""

import uuid

from django.db.models import QuerySet

from core.errors import NotFound
from executor.models import Receipt
from tenancy.models import Tenant


def receipt_list(*, tenant: Tenant) -> QuerySet[Receipt]:
    """Return the tenant's receipts (the API narrows them with ``executor.filters``)."""
    return Receipt.objects.filter(tenant=tenant)


def receipt_detail(*, tenant: Tenant, receipt_id: uuid.UUID) -> Receipt:
    receipt: Receipt | None = Receipt.objects.filter(tenant=tenant, pk=receipt_id).first()
    if receipt is None:
        raise NotFound("Receipt not found")
    return receipt
