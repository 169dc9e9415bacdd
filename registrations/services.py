"""Registrations own candidates: drafting and editing them. Nothing here changes what is active.

Publishing is a governed change: ``maintenance.schema_evolution`` asks for
it with a proposal, and only the executor activates (``registrations.publication``).
"""

from typing import Any

from django.db import transaction

from registrations.document import check_document, fingerprint
from registrations.errors import CandidateNotEditable
from registrations.models import Registration
from registrations.selectors import active_registration


@transaction.atomic(durable=True)
def draft_registration(*, tenant_id: Any, document: dict, created_by: str) -> Registration:
    """Store a well-formed document as an inert draft on top of the tenant's active version."""
    check_document(document)
    candidate = Registration(
        tenant_id=tenant_id,
        base_version=active_registration(tenant_id=tenant_id).version,
        document=document,
        fingerprint=fingerprint(document),
        created_by=created_by,
    )
    candidate.full_clean()
    candidate.save(force_insert=True)
    return candidate


@transaction.atomic  # not durable: the admin's change view already holds a transaction
def edit_draft(*, candidate: Registration, document: dict) -> Registration:
    """Replace a draft's document; its earlier validation no longer counts (other fingerprint)."""
    candidate = Registration.objects.select_for_update().get(pk=candidate.pk)
    if not candidate.is_editable:
        raise CandidateNotEditable(status_now=candidate.status)
    check_document(document)
    candidate.document = document
    candidate.fingerprint = fingerprint(document)
    candidate.status = Registration.Status.DRAFT
    candidate.save(update_fields=["document", "fingerprint", "status", "updated_at"])
    return candidate


def return_to_draft(*, candidate_id: Any) -> None:
    """Give a requested candidate back to its operator (its publish was refused); caller's transaction.

    Only a validated candidate may be asked for, so asking again means validating again.
    """
    Registration.objects.filter(pk=candidate_id, status=Registration.Status.REQUESTED).update(
        status=Registration.Status.DRAFT
    )
