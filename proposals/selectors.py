"""Reads of proposals, always within the caller's tenant."""

import uuid

from django.db.models import QuerySet

from proposals.errors import ProposalNotFound
from proposals.models import Proposal
from tenancy.models import Tenant


def proposal_list(*, tenant: Tenant, status: str = "", classification: str = "") -> QuerySet[Proposal]:
    """Return the tenant's proposals, newest first, optionally filtered."""
    proposals = Proposal.objects.filter(tenant=tenant)
    if status:
        proposals = proposals.filter(status=status)
    if classification:
        proposals = proposals.filter(classification=classification)
    return proposals


def proposal_detail(*, tenant: Tenant, proposal_id: uuid.UUID) -> Proposal:
    """Return one proposal; another tenant's id is not found."""
    proposal = Proposal.objects.filter(tenant=tenant, pk=proposal_id).first()
    if proposal is None:
        raise ProposalNotFound()
    return proposal
