"""Evidence: the sources agents cite and their immutable, numbered revisions."""

import uuid
from collections.abc import Collection
from typing import Any, Self, TypedDict

from django.db import models

from tenancy.models import Agent, Tenant


class EvidenceBinding(TypedDict):
    """How a proposal cites one exact evidence revision."""

    evidence_id: str | uuid.UUID
    revision: int
    content_hash: str


class EvidenceSource(models.Model):
    """Something an agent can cite: a backtest run, a document, a commit, …"""

    class Kind(models.TextChoices):
        BACKTEST_RUN = "backtest_run"
        DOCUMENT = "document"
        CONVERSATION = "conversation"
        TOOL_RESULT = "tool_result"
        COMMIT = "commit"
        DATASET = "dataset"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=32, choices=Kind.choices)
    external_ref = models.CharField(max_length=512)
    created_by = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="+")
    latest_revision = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "kind", "external_ref"], name="evidence_source_unique_ref"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind}:{self.external_ref}"


class EvidenceRevision(models.Model):
    """One immutable revision of a source's content.

    Content and hash never change after insert; only ``status`` moves, and only
    forward (valid → superseded when a newer revision arrives, valid or
    superseded → invalidated when the evidence is found wrong; invalidated is
    final, a correction is a new revision). A PostgreSQL trigger (migration
    0003) enforces the same for every database role.
    """

    # In the order a revision moves, from best to worst (evidence.selectors.BINDING_STATUSES ranks so).
    class Status(models.TextChoices):
        VALID = "valid"
        SUPERSEDED = "superseded"
        INVALIDATED = "invalidated"

    # What a revision holds once an erasure retracted its source (its hash stays, for the chain).
    RETRACTED_CONTENT = {"retracted": True}

    FORWARD = {
        Status.VALID: {Status.SUPERSEDED, Status.INVALIDATED},
        Status.SUPERSEDED: {Status.INVALIDATED},
        Status.INVALIDATED: set(),
    }
    _stored_status: str | None  # the status as loaded, which save() may only move forward

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    source = models.ForeignKey(EvidenceSource, on_delete=models.PROTECT, related_name="revisions")
    revision = models.PositiveIntegerField()
    content = models.JSONField()
    content_hash = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.VALID)
    status_reason = models.CharField(max_length=500, blank=True)
    # The admission firewall's findings in the content when it was registered (injection markers,
    # personal data; a secret is refused before any row exists): detector, field path, kind, span.
    admission_findings = models.JSONField(default=list, db_default=[], blank=True)
    created_by = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["source", "revision"]
        constraints = [
            models.UniqueConstraint(fields=["source", "revision"], name="evidence_revision_unique"),
            models.CheckConstraint(condition=models.Q(revision__gte=1), name="evidence_revision_gte_1"),
        ]
        indexes = [
            # Few revisions are ever invalidated: with this index a fence check
            # (``MemoryQuerySet.with_fence``) hashes those few once per query
            # instead of probing two indexes for every candidate memory.
            models.Index(
                fields=["tenant"],
                condition=models.Q(status="invalidated"),
                name="evidence_revision_invalidated",
            ),
        ]
        permissions = [("invalidate_evidencerevision", "Can invalidate evidence revisions")]

    def __str__(self) -> str:
        return f"{self.source_id}@{self.revision}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Insert once; afterwards only the status may change, and only forward."""
        update_fields = kwargs.get("update_fields")
        if not self._state.adding:
            if not (update_fields and set(update_fields) <= {"status", "status_reason"}):
                raise TypeError("Evidence revisions are immutable; only their status may change")
            stored = getattr(self, "_stored_status", None)
            moved = stored is not None and self.status != stored
            if stored == self.Status.INVALIDATED or (
                moved and stored is not None and self.status not in self.FORWARD[stored]
            ):
                raise TypeError(f"Evidence status only moves forward; {stored} cannot become {self.status}")
        super().save(*args, **kwargs)
        self._stored_status = self.status

    @classmethod
    def from_db(cls, db: str | None, field_names: Collection[str], values: Collection[Any]) -> Self:
        revision = super().from_db(db, field_names, values)
        revision._stored_status = revision.__dict__.get("status")  # what save() may move forward from
        return revision

    def refresh_from_db(self, *args: Any, **kwargs: Any) -> None:
        super().refresh_from_db(*args, **kwargs)
        self._stored_status = self.__dict__.get("status")

    @property
    def is_valid(self) -> bool:
        return self.status == self.Status.VALID

    def binding(self) -> "EvidenceBinding":
        """Return the triple a proposal uses to cite this exact revision."""
        return self.binding_of(self.source_id, self.revision, self.content_hash)

    @staticmethod
    def binding_of(source_id: Any, revision: int, content_hash: str) -> "EvidenceBinding":
        """The triple from a revision's columns, for reads that need no instance (recall's windows)."""
        return {"evidence_id": str(source_id), "revision": revision, "content_hash": content_hash}
