"""Tenants (workspaces), the agents that act in them, and their API tokens."""

import hashlib
import uuid
from datetime import datetime
from typing import Any, Self

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Greatest
from django.utils import timezone
from simple_history.models import HistoricalRecords

from core.models import AppendOnlyModel, AppendOnlyQuerySet
from core.pseudonyms import is_pseudonym


class Tenant(models.Model):
    """A workspace. Every governed row belongs to exactly one tenant."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.SlugField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        # Object permissions, granted per tenant with django-guardian.
        permissions = [
            ("decide_proposal", "Can decide proposals in this tenant"),
            ("audit_tenant", "Can view this tenant's proposals and decisions, never decide"),
            ("publish_registration", "Can request and approve publishing this tenant's registration"),
            ("erase_subject", "Can ask to erase every memory about a subject in this tenant"),
        ]

    def __str__(self) -> str:
        return self.name


class Agent(models.Model):
    """An AI agent identity; the submitting principal of its proposals.

    ``user`` links a human account to the agent (the next issue's
    separation-of-duties rule treats that user as the submitter).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="agents")
    name = models.SlugField(max_length=64)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    can_invalidate_evidence = models.BooleanField(
        default=False, help_text="May invalidate evidence revisions over the API"
    )
    is_system = models.BooleanField(
        default=False, help_text="Custodian's own agent (retention sweeps, revalidation); never a token"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="agent_unique_name_per_tenant")
        ]

    def __str__(self) -> str:
        return f"{self.tenant.name}/{self.name}"

    # DRF treats request.user as authenticated when this is true.
    is_authenticated = True
    is_anonymous = False


class DelegationQuerySet(models.QuerySet["Delegation"]):
    def live(self) -> Self:
        """Grants neither revoked nor expired."""
        now = timezone.now()
        return self.filter(revoked_at__isnull=True).filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now)
        )


class Delegation(models.Model):
    """An operator's grant that an agent may act for a subject (a user, an org, …).

    ``policy_context.acting_for_subject`` and ``?acting_for=`` are claims; this
    row is what makes one true. Without a live grant the claim is refused, so
    an agent can never vouch for its own authority. History keeps every grant
    and revocation with who made it.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="delegations")
    subject_kind = models.CharField(max_length=16)
    subject_id = models.CharField(max_length=256)
    reason = models.TextField(blank=True)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = DelegationQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        indexes = [
            models.Index(fields=["agent", "subject_kind", "subject_id"], name="delegation_lookup_idx"),
        ]

    def __str__(self) -> str:
        if is_pseudonym(self.subject_id):  # an erased subject: the pseudonym stands for kind and id
            return f"{self.agent} acts for {self.subject_id}"
        return f"{self.agent} acts for {self.subject_kind}:{self.subject_id}"

    def clean(self) -> None:
        """A grant lives in its agent's tenant; system agents already act for everyone."""
        if self.agent_id is None:
            return
        if self.agent.is_system:
            raise ValidationError({"agent": "System agents need no delegation and may not receive one."})
        self.tenant_id = self.agent.tenant_id

    @property
    def subject(self) -> dict[str, str]:
        return {"kind": self.subject_kind, "id": self.subject_id}


class TokenQuerySet(models.QuerySet[Any]):
    def active(self) -> Self:
        """Tokens neither revoked nor expired."""
        now = timezone.now()
        return self.filter(revoked_at__isnull=True).filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now)
        )


class BearerToken(models.Model):
    """A bearer token of which only the SHA-256 is stored.

    Tokens carry 256 bits of randomness, so a plain SHA-256 is a safe lookup
    key; a slow password hash would only slow every request down. The
    prefix tells which kind of principal a token belongs to.
    """

    PREFIX = ""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    hint = models.CharField(max_length=12, editable=False, help_text="First characters, to tell tokens apart")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = TokenQuerySet.as_manager()

    class Meta:
        abstract = True

    @staticmethod
    def hash_key(raw_key: str) -> str:
        return hashlib.sha256(raw_key.encode()).hexdigest()


class AgentToken(BearerToken):
    """An agent's token: bound to one agent, hence to one tenant."""

    PREFIX = "cst_"

    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="tokens")

    def __str__(self) -> str:
        return f"{self.agent} {self.hint}…"


class UserToken(BearerToken):
    """A person's token for the reviewer REST endpoints."""

    PREFIX = "csu_"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")

    def __str__(self) -> str:
        return f"{self.user} {self.hint}…"


class DeniedRequestQuerySet(AppendOnlyQuerySet["DeniedRequest"]):
    def bump(self, *, at: datetime) -> int:
        """Count one more refusal on the matching row; return how many rows matched.

        The only change a row ever takes (PostgreSQL enforces it too, see migration 0007).
        """
        return models.QuerySet.update(
            self, count=models.F("count") + 1, last_seen_at=Greatest("last_seen_at", models.Value(at))
        )


class DeniedRequest(AppendOnlyModel):
    """Refusals (401, 403, 404, 429) of one caller with one status and code in one time window.

    The first refusal inserts the row (its method, path and address are kept); each further one
    in the window adds to ``count`` and moves ``last_seen_at``, so a flood costs one row, not one
    per request. ``caller`` is ``agent:<id>``, ``user:<id>`` or ``addr:<address>`` (IPv6 by
    /64); once a window holds ``CUSTODIAN_DENIED_ANONYMOUS_ROWS`` anonymous rows, refusals from
    further addresses are counted on ``addr:*``. The tenant and principal come from the
    credential, when there was one; a 404 for another tenant's id is recorded like any other.
    Rows are never deleted.
    """

    id = models.BigAutoField(primary_key=True)
    window_start = models.DateTimeField()
    caller = models.CharField(max_length=100)
    tenant = models.ForeignKey(Tenant, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey(Agent, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=500)
    status = models.PositiveSmallIntegerField()
    code = models.CharField(max_length=64)
    remote_addr = models.GenericIPAddressField(null=True, blank=True)
    count = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_seen_at = models.DateTimeField()

    objects = DeniedRequestQuerySet.as_manager()  # type: ignore[misc]  # append-only, plus bump()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["window_start", "caller", "status", "code"], name="denied_one_row_per_window"
            )
        ]
        indexes = [
            models.Index(fields=["tenant", "-created_at"], name="denied_tenant_idx"),
            models.Index(fields=["-created_at"], name="denied_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.status} {self.method} {self.path} ({self.count}x)"
