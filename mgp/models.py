"""What the MGP binding keeps beside Custodian's own rows.

``MgpRecord`` maps a client's ``memory_id`` (unique per tenant) onto the
proposal that created the memory and the memory's own id; ``MgpTask`` is an
MGP async task, usually one proposal waiting for reviewers. Memories
themselves are written only by the executor, as for any other client.
"""

import uuid

from django.db import models

from core.models import AppendOnlyModel, AppendOnlyQuerySet
from proposals.models import Proposal
from tenancy.models import Agent, Tenant


class MgpRecord(models.Model):
    """A client-chosen memory id, bound to the memory Custodian created for it."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    external_id = models.CharField(max_length=256)
    memory_id = models.UUIDField(help_text="The Custodian memory (exists once its proposal applied)")
    proposal = models.ForeignKey(Proposal, on_delete=models.PROTECT, related_name="+")
    # The MGP fields Custodian has no column for; ``source`` is also the registered evidence.
    source = models.JSONField(default=dict)
    extensions = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "external_id"], name="mgp_external_id_per_tenant"),
        ]
        indexes = [models.Index(fields=["tenant", "memory_id"], name="mgp_record_memory_idx")]

    def __str__(self) -> str:
        return f"MGP id {self.external_id}"


class MgpTask(models.Model):
    """An MGP async task: a proposal awaiting review, or an export/import run later."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        COMPLETED = "completed"
        FAILED = "failed"
        CANCELLED = "cancelled"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey(
        Agent,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The only agent that reads it",
    )
    # Whom the task acts for (blank: the agent itself); the grant is checked again at every read.
    subject_kind = models.CharField(max_length=40, blank=True)
    subject_id = models.CharField(max_length=200, blank=True)
    operation = models.CharField(max_length=32)
    request_id = models.CharField(max_length=200)
    request = models.JSONField(default=dict, help_text="The MGP request, to run or answer later")
    proposal = models.ForeignKey(Proposal, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    message = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"MGP task {self.operation} {self.id}"

    @property
    def acting_for(self) -> dict[str, str] | None:
        """The subject the task acts for, as a policy context names it (None: the agent itself)."""
        return {"kind": self.subject_kind, "id": self.subject_id} if self.subject_kind else None


class MgpEventQuerySet(AppendOnlyQuerySet):
    def blank_targets(self) -> int:
        """Blank the MGP memory id these events name (a purge's scrub); the one change they ever take.

        A PostgreSQL trigger (migration 0003) lets exactly this UPDATE through.
        """
        return models.QuerySet.update(self, target="")

    blank_targets.alters_data = True  # type: ignore[attr-defined]  # templates must not call it


class MgpEvent(AppendOnlyModel):
    """An MGP call's outcome that no proposal or access event records.

    Refusals before any proposal or read existed (conflicts, scope and
    validation errors) and bulk reads (export, sync). Proposals (denied ones
    included) and access events (not-found and denied reads included) audit
    the rest; with these rows every MGP decision is in the audit stream. The
    subject id is kept only as a keyed digest, as access events keep it; the
    MGP memory id named is blanked when that memory is purged.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="+")
    operation = models.CharField(max_length=32)
    request_id = models.CharField(max_length=200, blank=True)
    allowed = models.BooleanField(default=False)
    code = models.CharField(max_length=40, help_text="The MGP error code, or the operation when allowed")
    reason = models.CharField(max_length=200, blank=True)
    target = models.CharField(max_length=256, blank=True, help_text="The MGP memory id named, if any")
    result_count = models.PositiveIntegerField(null=True, blank=True)
    policy_context = models.JSONField(default=dict)
    correlation_id = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = MgpEventQuerySet.as_manager()  # type: ignore[misc]  # append-only, plus blank_targets()

    class Meta:
        indexes = [models.Index(fields=["tenant", "created_at"], name="mgp_event_recent_idx")]

    def __str__(self) -> str:
        return f"MGP {self.operation}: {self.code}"
