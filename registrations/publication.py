"""Make a requested candidate the tenant's active registration. Only the executor imports this.

Called inside the executor's batch transaction, after it re-verified the
proposal (sealed verdict, approvals by people who may publish, the frozen
fingerprint still the candidate's, its base still the active version).
"""

from typing import Any

from django.db import transaction
from django.utils import timezone

from registrations.models import Registration
from registrations.selectors import forget_active


def activate(*, candidate: Registration, version: int, receipt_id: Any) -> Registration | None:
    """Supersede the active row and activate ``candidate`` as ``version``; return what it superseded."""
    previous = (
        Registration.objects.select_for_update()
        .filter(tenant_id=candidate.tenant_id, status=Registration.Status.ACTIVE)
        .order_by("pk")  # no join: FOR UPDATE would lock the tenant row too
        .first()
    )
    if previous is not None:
        previous.status = Registration.Status.SUPERSEDED
        previous.save(update_fields=["status", "updated_at"])
    candidate.status = Registration.Status.ACTIVE
    candidate.version = version
    candidate.published_at = timezone.now()
    candidate.receipt_id = receipt_id
    candidate.save(update_fields=["status", "version", "published_at", "receipt_id", "updated_at"])
    tenant_id = candidate.tenant_id
    forget_active(tenant_id)  # this transaction reads the new version from here on
    transaction.on_commit(lambda: forget_active(tenant_id))  # others, once it is committed
    return previous
