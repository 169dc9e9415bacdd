"""Registrations: a tenant's versioned, fingerprinted description of its memory types."""

import uuid

from django.db import models
from django.db.models import Q

from tenancy.models import Tenant


class Registration(models.Model):
    """One registration document of a tenant: a candidate, or a version that is or was active.

    A candidate (draft, validated or requested) is inert: nothing reads it but
    the validation and the publish proposal. Only the executor makes one
    ``active`` (``registrations.publication``); its ``document`` never changes
    after that. A tenant with no active row runs under the built-in default
    (version 1, ``registrations.document.DEFAULT_DOCUMENT``).
    """

    class Status(models.TextChoices):
        DRAFT = "draft"
        VALIDATED = "validated"
        REQUESTED = "requested"  # a publish proposal awaits its decision
        ACTIVE = "active"
        SUPERSEDED = "superseded"

    EDITABLE_STATUSES = (Status.DRAFT, Status.VALIDATED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.DRAFT)
    version = models.PositiveIntegerField(null=True, blank=True, help_text="Set when published")
    base_version = models.PositiveIntegerField(help_text="The active version this candidate extends")
    document = models.JSONField()
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of the document's canonical JSON")
    validation = models.JSONField(
        default=dict, blank=True, help_text="The last validation: fingerprint, counts, first failures"
    )
    created_by = models.CharField(max_length=150, help_text="The operator who drafted it")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    published_at = models.DateTimeField(null=True, blank=True)
    receipt_id = models.UUIDField(null=True, blank=True, help_text="The receipt that published it")

    class Meta:
        ordering = ["tenant_id", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "version"], condition=Q(version__isnull=False), name="registration_version"
            ),
            models.UniqueConstraint(
                fields=["tenant"], condition=Q(status="active"), name="registration_one_active"
            ),
        ]

    def __str__(self) -> str:
        if self.version:
            return f"registration v{self.version} ({self.status})"
        return f"registration candidate on v{self.base_version} ({self.status})"

    @property
    def is_editable(self) -> bool:
        return self.status in self.EDITABLE_STATUSES

    @property
    def validated_as_is(self) -> bool:
        """True if the last validation ran on exactly this document and found nothing wrong."""
        report = self.validation or {}
        return (
            report.get("fingerprint") == self.fingerprint
            and not report.get("changes")
            and not report.get("problems")
            and report.get("failures", 1) == 0
        )
