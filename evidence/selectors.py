"""Reads of evidence, always within the caller's tenant."""

import uuid
from collections.abc import Iterable
from typing import Any

from django.db.models import Prefetch, Q, QuerySet

from core.errors import NotFound
from evidence.models import EvidenceRevision, EvidenceSource
from tenancy.models import Tenant

# What a cited binding can be, from best to worst: its revision's own status, a hash that
# differs (``mismatch``), or no such revision in the tenant (``unknown``).
BINDING_STATUSES = (*EvidenceRevision.Status.values, "mismatch", "unknown")


def evidence_source(*, tenant: Tenant, evidence_id: uuid.UUID) -> EvidenceSource:
    """Return one source with its revisions; another tenant's id is simply not found."""
    source = (
        EvidenceSource.objects.filter(tenant=tenant, pk=evidence_id)
        .prefetch_related(Prefetch("revisions", queryset=EvidenceRevision.objects.order_by("revision")))
        .first()
    )
    if source is None:
        raise NotFound("No such evidence")
    return source


def evidence_revision(*, tenant: Tenant, evidence_id: uuid.UUID, revision: int) -> EvidenceRevision:
    found = EvidenceRevision.objects.filter(tenant=tenant, source_id=evidence_id, revision=revision).first()
    if found is None:
        raise NotFound("No such evidence revision")
    return found


def revisions_for_bindings(
    *, tenant: Tenant, bindings: Iterable[tuple[str, int]]
) -> dict[tuple[str, int], EvidenceRevision]:
    """Return the tenant's revisions for (evidence_id, revision) pairs, in one query."""
    pairs = list(bindings)
    if not pairs:
        return {}
    return {(str(row.source_id), row.revision): row for row in revisions_query(tenant.pk, pairs)}


def revisions_query(tenant_id: uuid.UUID, pairs: Iterable[tuple[str, int]]) -> QuerySet[EvidenceRevision]:
    """The tenant's revisions for (evidence_id, revision) pairs, as a queryset a caller may annotate."""
    match = Q()
    for evidence_id, number in pairs:
        match |= Q(source_id=evidence_id, revision=number)
    return EvidenceRevision.objects.filter(match, tenant_id=tenant_id)


def binding_statuses(
    *, tenant: Tenant, bindings: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], str, EvidenceRevision | None]]:
    """Return each binding with its status and revision, in one query.

    The status is the revision's own (valid, superseded, invalidated), or
    ``mismatch`` when the cited hash differs, or ``unknown`` when the tenant
    has no such revision (another tenant's evidence included).
    """
    found = revisions_for_bindings(
        tenant=tenant, bindings=[(b["evidence_id"], b["revision"]) for b in bindings]
    )
    return statuses_of(bindings, found)


def statuses_of(
    bindings: list[dict[str, Any]], found: dict[tuple[str, int], EvidenceRevision]
) -> list[tuple[dict[str, Any], str, EvidenceRevision | None]]:
    """Each binding with its status, given the tenant's revisions by (evidence_id, revision)."""
    statuses: list[tuple[dict[str, Any], str, EvidenceRevision | None]] = []
    for binding in bindings:
        revision = found.get((str(binding["evidence_id"]), binding["revision"]))
        if revision is None:
            statuses.append((binding, "unknown", None))
        elif revision.content_hash != binding["content_hash"]:
            statuses.append((binding, "mismatch", revision))
        else:
            statuses.append((binding, revision.status, revision))
    return statuses
