"""Asking for an erasure: by an agent for a subject it holds a grant for, or by an operator."""

import uuid
from typing import Any

from django.db import transaction

from core.canonical import digest
from core.errors import DomainError
from proposals.models import Proposal
from proposals.services.submission import create_proposal
from tenancy.models import Tenant
from tenancy.selectors import erasing_tenants
from tenancy.services import system_agent


class ErasureNotPermitted(DomainError):
    code = "erasure_not_permitted"
    status = 403
    title = "You may not ask to erase subjects in this tenant"


@transaction.atomic
def request_erasure(*, tenant: Tenant, erasure: dict[str, Any], reason: str, requested_by: Any) -> Proposal:
    """Ask, as the tenant's system agent, for an operator's erasure; it goes to review.

    ``erasure`` names a subject (``{"subject": {"kind", "id"}}``) or a source
    (``{"source": {"evidence_id"}}``).

    The operator must hold ``tenancy.erase_subject`` in the tenant; they are
    recorded as ``requested_by`` and never count as one of its approvers.
    """
    if not erasing_tenants(requested_by).filter(pk=tenant.pk).exists():
        raise ErasureNotPermitted()
    payload: Any = {
        "action": Proposal.Action.ERASE,
        "erasure": erasure,
        "requested_by": requested_by.pk,
        "reason": reason[:2000],
    }
    return create_proposal(
        agent=system_agent(tenant_id=tenant.pk),
        idempotency_key=f"erase:{uuid.uuid4()}",  # each ask is its own proposal
        payload=payload,
        request_hash=digest({"erasure": erasure, "requested_by": requested_by.pk}),
    )
