"""The hash-chained receipts of what the executor did with each outbox entry."""

import uuid
from typing import Any

from django.db import models

from core.canonical import digest
from core.models import AppendOnlyModel
from proposals.models import OutboxEntry, Proposal
from tenancy.models import Tenant


class Receipt(AppendOnlyModel):
    """What the executor did with one outbox entry, chained to the tenant's previous receipt.

    ``hash`` is the SHA-256 of the canonical JSON of :meth:`body`, which
    includes ``prev_hash``; ``verify_receipts`` recomputes the chain.
    A database trigger (PostgreSQL) refuses UPDATE and DELETE as well.
    A receipt that wrote a memory revision also binds the rows it left
    (``after_memory_hash``, ``before_memory_hash``: see ``executor.revision_hashes``),
    so the chain covers memories, their history and evidence links too.
    """

    class Outcome(models.TextChoices):
        APPLIED = "applied"
        STALE = "stale"
        EVIDENCE_INVALID = "evidence_invalid"
        GATE_FAILED = "gate_failed"
        DIGEST_MISMATCH = "digest_mismatch"
        APPROVALS_MISSING = "approvals_missing"
        WITHDRAWN = "withdrawn"
        REQUEUED = "requeued"
        UNAUTHORISED_RELEASE = "unauthorised_release"
        DEDUPE_CONFLICT = "dedupe_conflict"
        CONTENT_INVALID = "content_invalid"

    GENESIS_HASH = "0" * 64

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    seq = models.PositiveBigIntegerField()
    proposal = models.ForeignKey(Proposal, on_delete=models.PROTECT, related_name="receipts")
    outbox_entry = models.OneToOneField(OutboxEntry, on_delete=models.PROTECT, related_name="receipt")
    outcome = models.CharField(max_length=32, choices=Outcome.choices)
    reason = models.TextField(blank=True)
    memory_id = models.UUIDField()
    before_revision = models.PositiveIntegerField(null=True)
    after_revision = models.PositiveIntegerField(null=True)
    before_content_hash = models.CharField(max_length=64, blank=True)
    after_content_hash = models.CharField(max_length=64, blank=True)
    before_memory_hash = models.CharField(
        max_length=64,
        blank=True,
        help_text="Revision before_revision as history keeps it after this receipt, with its evidence links",
    )
    after_memory_hash = models.CharField(
        max_length=64,
        blank=True,
        help_text="The revision this receipt wrote, as stored, with its evidence links",
    )
    action_digest = models.CharField(max_length=64)
    evidence = models.JSONField(default=list)
    decision_ids = models.JSONField(default=list)
    effects = models.JSONField(default=dict, help_text="e.g. the row classes a purge removed")
    policy_fingerprint = models.CharField(max_length=64)
    registration_version = models.PositiveIntegerField(
        null=True, blank=True, help_text="The tenant's registration version the executor checked against"
    )
    executor = models.JSONField(default=dict, help_text="Worker host, pid and task id")
    created_at = models.DateTimeField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)

    # Set for the admin's receipt list by executor.presenters.attach_page; not columns.
    summary: Any
    decisions: list[Any]

    class Meta:
        ordering = ["tenant", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "seq"], name="receipt_unique_seq"),
        ]
        indexes = [
            models.Index(fields=["tenant", "memory_id", "seq"], name="receipt_memory_idx"),
            # verify_receipts: "does an applied receipt account for this memory revision?"
            models.Index(
                fields=["tenant", "memory_id", "after_revision"],
                condition=models.Q(outcome="applied"),
                name="receipt_applied_revision_idx",
            ),
            models.Index(fields=["tenant", "proposal", "seq"], name="receipt_proposal_idx"),
            # verify_receipts: the receipts that wrote a link or entity row (executor.graph).
            models.Index(
                fields=["tenant", "seq"],
                condition=(models.Q(effects__has_key="linked") | models.Q(effects__has_key="entity"))
                & models.Q(outcome="applied"),
                name="receipt_graph_idx",
            ),
            # verify_receipts: the compactions, whose one receipt also moved every member.
            models.Index(
                fields=["tenant", "seq"],
                condition=models.Q(effects__has_key="compaction", outcome="applied"),
                name="receipt_compaction_idx",
            ),
            # The admin's receipt list narrowed by date (its "when" filter), in one tenant or across
            # the tenants a viewer sees; the list itself walks receipt_unique_seq in chain order.
            models.Index(fields=["tenant", "-created_at", "-id"], name="receipt_recent_idx"),
            models.Index(fields=["-created_at", "-id"], name="receipt_global_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"receipt {self.seq} {self.outcome}"

    # The columns a receipt's hash covers (every recorded column except ``hash``), as attnames.
    BODY_COLUMNS = (
        "id",
        "tenant_id",
        "seq",
        "proposal_id",
        "outbox_entry_id",
        "outcome",
        "reason",
        "memory_id",
        "before_revision",
        "after_revision",
        "before_content_hash",
        "after_content_hash",
        "before_memory_hash",
        "after_memory_hash",
        "action_digest",
        "evidence",
        "decision_ids",
        "effects",
        "policy_fingerprint",
        "registration_version",
        "executor",
        "created_at",
        "prev_hash",
    )
    UUID_COLUMNS = frozenset({"id", "tenant_id", "proposal_id", "outbox_entry_id", "memory_id"})
    # Added later (memory hashes, then the registration version): left out of the body while
    # empty, so older receipts keep their hashes.
    OPTIONAL_COLUMNS = ("before_memory_hash", "after_memory_hash", "registration_version")

    def body(self) -> dict[str, Any]:
        """Return every recorded column except ``hash``, as JSON."""
        return self.body_of({column: getattr(self, column) for column in self.BODY_COLUMNS})

    @classmethod
    def body_of(cls, row: dict[str, Any]) -> dict[str, Any]:
        """Return the JSON body of a receipt given as a row of :attr:`BODY_COLUMNS` values.

        ``verify_receipts`` hashes rows straight from ``values_list``,
        without building a model instance for each; ids may come as UUIDs
        or as text in either database's spelling.
        """
        body = {
            column: uuid_text(row[column]) if column in cls.UUID_COLUMNS else row[column]
            for column in cls.BODY_COLUMNS
        }
        body["created_at"] = row["created_at"].isoformat()
        for column in cls.OPTIONAL_COLUMNS:
            if not body[column]:
                del body[column]
        return body

    def compute_hash(self) -> str:
        return digest(self.body())


def uuid_text(value: uuid.UUID | str) -> str:
    """Return an id in its canonical text (lower-case, dashed), however the database gave it.

    PostgreSQL casts a uuid to dashed text; SQLite stores 32 hex digits.
    """
    if isinstance(value, str):
        if len(value) == 32:
            value = f"{value[:8]}-{value[8:12]}-{value[12:16]}-{value[16:20]}-{value[20:]}"
        return value.lower()
    return str(value)


class ReceiptChain(models.Model):
    """The head of a tenant's receipt chain; locking it serialises appends."""

    tenant = models.OneToOneField(Tenant, primary_key=True, on_delete=models.PROTECT, related_name="+")
    seq = models.PositiveBigIntegerField(default=0)
    head_hash = models.CharField(max_length=64, default=Receipt.GENESIS_HASH)
    # The last head ``checkpoint_receipts`` signed (the signed file itself lives outside the database).
    checkpoint_seq = models.PositiveBigIntegerField(null=True, blank=True)
    checkpoint_signed_at = models.DateTimeField(null=True, blank=True)
    # That checkpoint exactly as signed (with its signature), so a receipt export can carry it.
    checkpoint = models.JSONField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.tenant_id} @ {self.seq}"


class ChainVerification(models.Model):
    """One "verify now" of a tenant's chain: asked for in the admin, run by a Celery task.

    The web process only inserts the request; the executor records the result.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        OK = "ok"
        BROKEN = "broken"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    requested_by = models.CharField(max_length=150)
    requested_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    head_seq = models.PositiveBigIntegerField(null=True, blank=True, help_text="The chain head when it ran")
    receipts = models.PositiveBigIntegerField(
        default=0, help_text="Receipts recomputed (so far, while running)"
    )
    total = models.PositiveBigIntegerField(
        default=0, help_text="Receipts to recompute (the head when it began)"
    )
    problems = models.JSONField(default=list)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "-requested_at"], name="chain_verification_recent_idx"),
            # The newest finished run per tenant (metrics.selectors.verifications).
            models.Index(
                fields=["tenant", "-finished_at"],
                name="chain_verification_done_idx",
                condition=models.Q(finished_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tenant_id} {self.status} at {self.requested_at:%Y-%m-%d %H:%M}"

    @property
    def ok(self) -> bool:
        return self.status == self.Status.OK

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.OK, self.Status.BROKEN)

    @property
    def percent(self) -> int:
        return min(100, self.receipts * 100 // self.total) if self.total else 0


class TenantExport(AppendOnlyModel):
    """One export of a tenant's content (``export_tenant``), so an erasure can name the files that held it.

    An export cannot be called back once written; the auditor must know which
    ones hold what an erasure removed. Ids, times and the chain head only.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    exported_at = models.DateTimeField()
    exported_by = models.CharField(max_length=150)
    head_seq = models.PositiveBigIntegerField(help_text="The receipt chain's head the export ends with")
    rows = models.PositiveBigIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["tenant", "exported_at"], name="tenant_export_time_idx")]

    def __str__(self) -> str:
        return f"export of {self.tenant_id} at {self.exported_at:%Y-%m-%d %H:%M}"
