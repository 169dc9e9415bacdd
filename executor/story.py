"""The story of one receipt, on one page: what was asked, what changed, who decided, on what, and the chain.

Memory content is shown only through the read policy for a person: the
strictest view of the revision before, the revision written and the memory
today wins (``memory_core.people``).
"""

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q
from django.urls import reverse

from evidence.models import EvidenceRevision
from executor.models import ChainVerification, Receipt
from memory_core.models import Memory
from memory_core.people import CONTENT_FIELDS, current_memory, person_rule, readable_content
from memory_core.read_policy import ReadRule
from memory_core.selectors import memory_at_revision
from proposals.models import Proposal
from reviews.models import ReviewDecision
from reviews.presenters import DiffRow, diff_rows
from tenancy.selectors import admin_tenants


@dataclass(frozen=True)
class EvidenceCited:
    """One evidence revision a receipt cites, as it stands today, linked where the viewer may follow."""

    evidence_id: str
    revision: int
    now: EvidenceRevision | None  # None once the revision is gone (its tenant purged it)
    source_url: str = ""  # the source's admin page, when it opens for the viewer
    revision_url: str = ""  # the revision's admin page, likewise

    @property
    def kind(self) -> str:
        return self.now.source.get_kind_display().lower() if self.now else ""

    @property
    def ref(self) -> str:
        return self.now.source.external_ref if self.now else ""


@dataclass
class ReceiptStory:
    receipt: Receipt
    proposal: Proposal
    rule: ReadRule
    diff: list[DiffRow]
    content_withheld: bool
    decisions: list[ReviewDecision]
    evidence: list[EvidenceCited]
    revisions: str  # "created at revision 1", "revision 1 → 2"
    fenced: bool
    neighbours: dict[str, Any] = field(default_factory=dict)
    verification: ChainVerification | None = None


def receipt_story(receipt: Receipt, *, viewer: Any) -> ReceiptStory:
    """Gather everything the receipt page shows ``viewer``, each part in one query."""
    proposal = receipt.proposal
    now = current_memory(receipt.memory_id)
    before = memory_at_revision(memory=now, revision=receipt.before_revision or 0)
    after = memory_at_revision(memory=now, revision=receipt.after_revision or 0)
    rule = person_rule(before, after, now) if (before or after or now) else person_rule(_unknown())
    withheld = rule.mode in ("metadata_only", "deny")
    return ReceiptStory(
        receipt=receipt,
        proposal=proposal,
        rule=rule,
        diff=_diff(before, after, rule) if after is not None else [],
        content_withheld=withheld,
        decisions=list(
            ReviewDecision.objects.filter(pk__in=receipt.decision_ids)
            .select_related("actor")
            .order_by("created_at")
        ),
        evidence=_evidence_now(receipt, viewer),
        revisions=revision_change(receipt),
        fenced=now.is_fenced if now is not None else False,
        neighbours={
            "previous" if row["seq"] < receipt.seq else "next": row["pk"]
            for row in Receipt.objects.filter(
                tenant_id=receipt.tenant_id, seq__in=[receipt.seq - 1, receipt.seq + 1]
            ).values("pk", "seq")
        },
        verification=ChainVerification.objects.filter(tenant_id=receipt.tenant_id, finished_at__isnull=False)
        .order_by("-finished_at")
        .first(),
    )


def _unknown() -> Memory:
    """A memory nobody can read more of than metadata: what a purged memory's content becomes."""
    return Memory(sensitivity=Memory.Sensitivity.RESTRICTED, state=Memory.State.DELETED)


def _diff(before: Memory | None, after: Memory, rule: ReadRule) -> list[DiffRow]:
    """Diff the revision before with the revision written, each as the read policy shows it."""
    shown_before = _as_read(before, rule) if before is not None else None
    shown_after = _as_read(after, rule)
    written = Proposal(fields=shown_after.snapshot())
    rows = diff_rows(written, shown_before).rows
    if rule.mode in ("metadata_only", "deny"):
        hidden = ("content.", *CONTENT_FIELDS)
        rows = [row for row in rows if not row.field.startswith(hidden)]
    return rows


def _as_read(memory: Memory, rule: ReadRule) -> Memory:
    """A copy of ``memory`` whose content-bearing fields are what ``rule`` lets a person see."""
    shown = readable_content(memory, rule)
    copy = Memory(**{f.attname: getattr(memory, f.attname) for f in Memory._meta.concrete_fields})
    copy.content = shown.get("content") or {}
    copy.dedupe_key = shown.get("dedupe_key") or ""
    copy.state_reason = shown.get("state_reason") or ""
    return copy


def revision_change(receipt: Receipt) -> str:
    """Say which revisions the receipt moved between: a create has no revision before."""
    before, after = receipt.before_revision, receipt.after_revision
    if before is None and after is None:
        return "no revision written"
    if before is None:
        return f"created at revision {after}"
    return f"revision {before} → {after if after is not None else 'none'}"


def _evidence_now(receipt: Receipt, viewer: Any) -> list[EvidenceCited]:
    """Each evidence revision the receipt cites, with its kind, reference and status today."""
    wanted = Q(pk__in=[])
    for item in receipt.evidence:
        wanted |= Q(source_id=item["evidence_id"], revision=item["revision"])
    found = {
        (str(row.source_id), row.revision): row
        for row in EvidenceRevision.objects.filter(wanted, tenant_id=receipt.tenant_id).select_related(
            "source"
        )
    }
    opens = (
        {
            perm: admin_tenants(viewer, perm).filter(pk=receipt.tenant_id).exists()
            for perm in ("evidence.view_evidencesource", "evidence.view_evidencerevision")
        }
        if found
        else {}
    )
    cited = []
    for item in receipt.evidence:
        now = found.get((str(item["evidence_id"]), item["revision"]))
        links = {}
        if now is not None and opens["evidence.view_evidencesource"]:
            links["source_url"] = reverse("admin:evidence_evidencesource_change", args=[now.source_id])
        if now is not None and opens["evidence.view_evidencerevision"]:
            links["revision_url"] = reverse("admin:evidence_evidencerevision_change", args=[now.pk])
        cited.append(EvidenceCited(str(item["evidence_id"]), item["revision"], now, **links))
    return cited
