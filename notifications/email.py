"""Email to reviewers: who hears of a proposal awaiting them, and sending their messages.

A person with ``decide_proposal`` on the tenant (the object permission, never a global
grant) gets a message when a proposal awaits review and when its window is about to close,
unless their preference says a daily digest or none. Rows are written with the event, like
webhook deliveries, and sent by the notifications worker through Django's email framework.
Messages name the proposal's action, memory type, rule and submitter, and link to its review
page; never its content.
"""

from collections.abc import Iterable
from datetime import datetime, time, timedelta
from typing import Any, cast

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage, get_connection
from django.db import transaction
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone
from guardian.shortcuts import get_users_with_perms

from notifications import events
from notifications.delivery import backoff
from notifications.events import Event
from notifications.models import EmailDelivery, EmailPreference
from tenancy.models import Agent, Tenant

EMAILED = (events.PENDING_REVIEW, events.EXPIRING)
Status = EmailDelivery.Status


def email_rows(events_: Iterable[Event], *, now: datetime) -> list[EmailDelivery]:
    """The messages these events owe reviewers (unsaved), per each person's preference."""
    wanted = [event for event in events_ if event.type in EMAILED]
    if not wanted:
        return []
    reviewers = {tenant_id: _reviewers(tenant_id) for tenant_id in {str(e.tenant_id) for e in wanted}}
    rows = []
    for event in wanted:
        for user_id, mode in reviewers[str(event.tenant_id)]:
            digest = mode == EmailPreference.Mode.DIGEST
            rows.append(
                EmailDelivery(
                    tenant_id=event.tenant_id,
                    user_id=user_id,
                    event_type=event.type,
                    payload=event.body(""),
                    digest=digest,
                    next_attempt_at=next_digest(now) if digest else now,
                )
            )
    return rows


def _reviewers(tenant_id: str) -> list[tuple[Any, str]]:
    """(user id, mode) of the active people with an address who decide in the tenant and did not opt out."""
    tenant = Tenant.objects.get(pk=tenant_id)
    people = get_users_with_perms(
        tenant, only_with_perms_in=["decide_proposal"], with_group_users=True, with_superusers=False
    )
    people_ids = cast("QuerySet[Any]", people).values("pk")
    users = get_user_model().objects.filter(pk__in=people_ids, is_active=True).exclude(email="")
    modes = dict(EmailPreference.objects.filter(user__in=users).values_list("user_id", "mode"))
    chosen = [(user.pk, modes.get(user.pk, EmailPreference.Mode.IMMEDIATE)) for user in users]
    return [(pk, mode) for pk, mode in chosen if mode != EmailPreference.Mode.OFF]


def next_digest(now: datetime) -> datetime:
    """The next daily digest time, ``CUSTODIAN_DIGEST_HOUR`` o'clock UTC."""
    today = datetime.combine(now.date(), time(settings.CUSTODIAN_DIGEST_HOUR), tzinfo=now.tzinfo)
    return today if today > now else today + timedelta(days=1)


def send(delivery_id: str) -> str | None:
    """Send one due message (for a digest row: every due digest row of that person, as one)."""
    batch = claim(delivery_id)
    if not batch:
        return None
    try:
        _message(batch).send()
    except Exception as exc:  # SMTP refused, timed out or unreachable: retried like a webhook
        return settle(batch, error=type(exc).__name__)
    return settle(batch, error="")


@transaction.atomic(durable=True)
def claim(delivery_id: str) -> list[EmailDelivery]:
    """Take a due message (and, for a digest, its due siblings) for one attempt; [] if not ours."""
    delivery = EmailDelivery.objects.select_for_update().filter(pk=delivery_id).first()
    now = timezone.now()
    if delivery is None or delivery.status in (Status.DELIVERED, Status.DEAD):
        return []
    if delivery.status == Status.DELIVERING and delivery.lease_expires_at and delivery.lease_expires_at > now:
        return []
    if delivery.status == Status.PENDING and delivery.next_attempt_at > now:
        return []
    batch = [delivery]
    if delivery.digest:
        batch += list(
            EmailDelivery.objects.select_for_update(skip_locked=True)
            .filter(user_id=delivery.user_id, digest=True, status=Status.PENDING, next_attempt_at__lte=now)
            .exclude(pk=delivery.pk)
            .order_by("created_at")[:100]
        )
    if delivery.attempts >= settings.CUSTODIAN_WEBHOOK_MAX_ATTEMPTS:
        EmailDelivery.objects.filter(pk=delivery.pk).update(status=Status.DEAD, lease_expires_at=None)
        return []
    lease = now + timedelta(seconds=settings.CUSTODIAN_WEBHOOK_LEASE_SECONDS)
    for row in batch:
        row.attempts += 1
        row.status, row.lease_expires_at = Status.DELIVERING, lease
        row.save(update_fields=["attempts", "status", "lease_expires_at"])
    return batch


@transaction.atomic(durable=True)
def settle(batch: list[EmailDelivery], *, error: str) -> str:
    """Sent, dead past the bound, or due again after a backoff."""
    now = timezone.now()
    for row in batch:
        row.lease_expires_at, row.last_error = None, error
        if not error:
            row.status, row.delivered_at = Status.DELIVERED, now
        elif row.attempts >= settings.CUSTODIAN_WEBHOOK_MAX_ATTEMPTS:
            row.status = Status.DEAD
        else:
            row.status, row.next_attempt_at = Status.PENDING, now + backoff(row.attempts)
        row.save(
            update_fields=["status", "delivered_at", "next_attempt_at", "lease_expires_at", "last_error"]
        )
    return batch[0].status


def _message(batch: list[EmailDelivery]) -> EmailMessage:
    user = get_user_model().objects.get(pk=batch[0].user_id)
    tenant = Tenant.objects.get(pk=batch[0].tenant_id)
    submitters = _submitters(batch)
    paragraphs = [_paragraph(row.event_type, row.payload["data"], submitters) for row in batch]
    if len(batch) == 1:
        subject = f"[Custodian] {_headline(batch[0].event_type)} in {tenant.name}"
    else:
        subject = f"[Custodian] {len(batch)} proposals for your review"
    return EmailMessage(
        subject=subject,
        body="\n\n".join(paragraphs) + f"\n\nChange how you are notified: {_preference_link()}\n",
        to=[user.email],
        connection=get_connection(timeout=settings.EMAIL_TIMEOUT),
    )


def _preference_link() -> str:
    return settings.CUSTODIAN_PUBLIC_URL.rstrip("/") + reverse("notifications:email-preference")


def _submitters(batch: list[EmailDelivery]) -> dict[str, str]:
    ids = {row.payload["data"].get("submitted_by") for row in batch} - {None}
    return {str(pk): name for pk, name in Agent.objects.filter(pk__in=ids).values_list("pk", "name")}


def _headline(event_type: str) -> str:
    return "A review window closes soon" if event_type == events.EXPIRING else "A proposal awaits your review"


def _paragraph(event_type: str, data: dict[str, Any], submitters: dict[str, str]) -> str:
    kind = " of ".join(part for part in (data.get("action"), data.get("memory_type")) if part)
    link = settings.CUSTODIAN_PUBLIC_URL.rstrip("/") + reverse("reviews:proposal", args=[data["proposal_id"]])
    return "\n".join(
        [
            f"{_headline(event_type)}: {kind}",
            f"Rule: {data.get('rule') or '-'}",
            f"Submitted by: {submitters.get(str(data.get('submitted_by')), 'an agent')}",
            f"Review deadline: {data.get('review_deadline') or 'none'}",
            f"Review it: {link}",
        ]
    )
