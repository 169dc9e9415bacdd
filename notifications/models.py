"""Webhook endpoints operators register per tenant, and the durable deliveries to them.

A delivery row is written in the transaction of the event it reports, so an event
that happened is an event that will be delivered (or dead-lettered, visibly); the
broker only carries "deliver row X" (see ``notifications.services``).
"""

import base64
import secrets
import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import models

from notifications.events import EVENT_TYPES
from tenancy.models import Tenant

_http_only = URLValidator(schemes=["http", "https"], message="Enter an http:// or https:// URL.")


def new_secret() -> str:
    """A Standard Webhooks signing secret: ``whsec_`` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def validate_event_types(value: object) -> None:
    if not isinstance(value, list) or not value or set(value) - set(EVENT_TYPES):
        raise ValidationError(f"Choose one or more of: {', '.join(EVENT_TYPES)}.")


class WebhookEndpoint(models.Model):
    """Where one tenant's subscribed events are posted (operators choose the URL)."""

    class Format(models.TextChoices):
        STANDARD = "standard", "Standard Webhooks (JSON)"
        SLACK = "slack", 'Slack-compatible ({"text": …})'

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.CharField(max_length=2000, validators=[_http_only], help_text="http:// or https:// only")
    secret = models.CharField(max_length=100, default=new_secret, editable=False)
    event_types = models.JSONField(default=list, validators=[validate_event_types])
    format = models.CharField(max_length=16, choices=Format.choices, default=Format.STANDARD)
    active = models.BooleanField(default=True)
    description = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["tenant", "url"]
        indexes = [models.Index(fields=["tenant", "active"], name="webhook_endpoint_tenant_idx")]

    def __str__(self) -> str:
        return self.url

    def wants(self, event_type: str) -> bool:
        return self.active and event_type in self.event_types


class Delivery(models.Model):
    """What every durable notification row shares: its state, its attempts and its lease.

    The state machine (``Status``), the due-time (``next_attempt_at``) and the lease are read
    the same way for webhooks and email by the sweep, the senders and ``/readyz``.
    """

    class Status(models.TextChoices):
        PENDING = "pending"  # due at next_attempt_at (a retry once attempts > 0)
        DELIVERING = "delivering"  # a worker sends it now, until lease_expires_at
        DELIVERED = "delivered"
        DEAD = "dead"  # gave up after the attempt bound; an operator may replay it

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    event_type = models.CharField(max_length=40)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=200, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["-created_at"]


class WebhookDelivery(Delivery):
    """One event for one endpoint; its id is the ``webhook-id`` every attempt carries."""

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    payload = models.JSONField(help_text="The event's metadata (ids, kinds, outcomes), never content")
    occurred_at = models.DateTimeField()
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta(Delivery.Meta):
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                name="webhook_delivery_due_idx",
                condition=models.Q(status__in=["pending", "delivering"]),
            ),
            models.Index(fields=["tenant", "-created_at"], name="webhook_delivery_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} → {self.endpoint_id} ({self.status})"


class DeliveryAttempt(models.Model):
    """One POST of a delivery: what came back, never the response body beyond a short excerpt."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_rows")
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error_class = models.CharField(max_length=100, blank=True)
    excerpt = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["started_at", "id"]

    def __str__(self) -> str:
        return f"{self.started_at:%Y-%m-%d %H:%M:%S} {self.status_code or self.error_class}"


class Announcement(models.Model):
    """An event announced once per subject (``proposal.expiring``), so a sweep never repeats it."""

    event_type = models.CharField(max_length=40)
    subject_id = models.UUIDField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["event_type", "subject_id"], name="announcement_once"),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.subject_id}"


class EmailPreference(models.Model):
    """How one person hears about reviews awaiting them: each at once, a daily digest, or not at all."""

    class Mode(models.TextChoices):
        IMMEDIATE = "immediate", "Each proposal at once"
        DIGEST = "digest", "One daily digest"
        OFF = "off", "No email"

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preference"
    )
    mode = models.CharField(max_length=16, choices=Mode.choices, default=Mode.IMMEDIATE)

    def __str__(self) -> str:
        return f"{self.user} ({self.mode})"


class EmailDelivery(Delivery):
    """One reviewer's message about one event, durable as a webhook delivery (digests wait for their hour)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    payload = models.JSONField(help_text="The event's metadata, never content")
    digest = models.BooleanField(default=False)

    class Meta(Delivery.Meta):
        verbose_name_plural = "email deliveries"
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                name="email_delivery_due_idx",
                condition=models.Q(status__in=["pending", "delivering"]),
            ),
            models.Index(fields=["user", "status", "digest"], name="email_delivery_user_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} → {self.user_id} ({self.status})"
