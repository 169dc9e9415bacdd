"""Evidence owns sources and their immutable revisions.

Revising or invalidating evidence has consequences for proposals and
memories, so the durable entry points for those live a layer up, in
``provenance.services``; the row writes are here.
"""

from typing import Any

from django.db import IntegrityError, transaction

from admission import scan
from core.canonical import digest
from evidence.errors import EvidenceSourceExists, SecretInEvidence
from evidence.models import EvidenceRevision, EvidenceSource
from tenancy.models import Agent


@transaction.atomic(durable=True)
def register_evidence(*, agent: Agent, kind: str, external_ref: str, content: Any) -> EvidenceRevision:
    """Register a new evidence source and its revision 1 (refused whole if the content holds a secret)."""
    findings = admitted_findings(content)
    source = EvidenceSource(tenant_id=agent.tenant_id, kind=kind, external_ref=external_ref, created_by=agent)
    try:
        with transaction.atomic():
            source.save()
    except IntegrityError:
        existing = EvidenceSource.objects.get(tenant_id=agent.tenant_id, kind=kind, external_ref=external_ref)
        raise EvidenceSourceExists(evidence_id=str(existing.id)) from None
    return _append_revision(source=source, agent=agent, content=content, findings=findings)


def append_revision(*, source: EvidenceSource, agent: Agent, content: Any) -> EvidenceRevision:
    """Append revision n+1 and mark revision n superseded (in the caller's transaction).

    The source row is locked so two concurrent appends cannot both claim n+1. Content that
    holds a secret is refused before anything is locked or written.
    """
    findings = admitted_findings(content)
    source = EvidenceSource.objects.select_for_update().get(pk=source.pk)
    EvidenceRevision.objects.filter(source=source, status=EvidenceRevision.Status.VALID).update(
        status=EvidenceRevision.Status.SUPERSEDED
    )
    return _append_revision(source=source, agent=agent, content=content, findings=findings)


def admitted_findings(content: Any) -> list[dict[str, Any]]:
    """Scan evidence content; refuse a secret (``SecretInEvidence``), return the other findings.

    Evidence is scanned once, here: its findings are kept with the revision and become facts
    of every proposal citing it, so a submission never reads (or rescans) evidence content.
    """
    result = scan({"content": content})
    if result.contains_secret:
        raise SecretInEvidence(
            findings=[finding.as_json() for finding in result.findings if finding.detector == "credentials"]
        )
    return [finding.as_json() for finding in result.findings]


def mark_invalidated(*, revision: EvidenceRevision, reason: str) -> tuple[EvidenceRevision, bool]:
    """Mark one revision invalidated (in the caller's transaction); say whether it changed.

    Reads stop serving the memories resting on it at once: the fence is
    derived from this status.
    """
    revision = EvidenceRevision.objects.select_for_update().get(pk=revision.pk)
    if revision.status == EvidenceRevision.Status.INVALIDATED:
        return revision, False
    revision.status, revision.status_reason = EvidenceRevision.Status.INVALIDATED, reason
    revision.save(update_fields=["status", "status_reason"])
    return revision, True


def _append_revision(
    *, source: EvidenceSource, agent: Agent, content: Any, findings: list[dict[str, Any]]
) -> EvidenceRevision:
    source.latest_revision += 1
    source.save(update_fields=["latest_revision"])
    return EvidenceRevision.objects.create(
        tenant_id=source.tenant_id,
        source=source,
        revision=source.latest_revision,
        content=content,
        content_hash=digest(content),
        admission_findings=findings,
        created_by=agent,
    )
