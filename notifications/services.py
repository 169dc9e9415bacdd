"""Writing notifications: deliveries in the event's own transaction, the sweep, and replays.

The pattern is the executor's outbox: the row is the durable request, the broker message
("deliver these rows") only an optimisation. A nudge lost between commit and publish, a
worker killed mid-POST, a broker restarted empty: the beat sweep finds the row again and
hands it out. Retries are rows due later (``next_attempt_at``), never Celery countdowns.
"""

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.after_response import after_response
from notifications.email import email_rows, next_digest
from notifications.events import Event
from notifications.models import EmailDelivery, EmailPreference, WebhookDelivery, WebhookEndpoint

logger = logging.getLogger(__name__)
DELIVER_TASK = "notifications.deliver"
EMAIL_TASK = "notifications.send_email"
PER_MESSAGE = 5  # deliveries per message: five timed-out POSTs stay inside the task time limit


def record_event(event: Event) -> list[WebhookDelivery]:
    """Record one event for every endpoint of its tenant that subscribes to it (caller's transaction)."""
    return record_events([event])


def record_events(events: Iterable[Event]) -> list[WebhookDelivery]:
    """Record events in bulk: one read of the endpoints, one insert per table, one nudge after commit.

    Also writes the reviewers' email messages the events owe (``notifications.email``).
    """
    events = list(events)
    if not events:
        return []
    now = timezone.now()
    rows = _webhook_rows(events, now=now)
    emails = email_rows(events, now=now)
    WebhookDelivery.objects.bulk_create(rows)
    EmailDelivery.objects.bulk_create(emails)
    webhook_ids = [str(row.id) for row in rows]
    email_ids = [str(row.id) for row in emails if not row.digest]
    if webhook_ids or email_ids:
        transaction.on_commit(lambda: after_response(partial(_publish_both, webhook_ids, email_ids)))
    return rows


def _webhook_rows(events: list[Event], *, now: datetime) -> list[WebhookDelivery]:
    endpoints = list(
        WebhookEndpoint.objects.filter(tenant_id__in={e.tenant_id for e in events}, active=True).only(
            "id", "tenant_id", "event_types", "active"
        )
    )
    rows = []
    for event in events:
        for endpoint in endpoints:
            if str(endpoint.tenant_id) == str(event.tenant_id) and endpoint.wants(event.type):
                row = WebhookDelivery(
                    tenant_id=event.tenant_id,
                    endpoint=endpoint,
                    event_type=event.type,
                    occurred_at=event.occurred_at,
                    next_attempt_at=now,
                )
                row.payload = event.body(row.id)
                rows.append(row)
    return rows


def _publish_both(webhook_ids: list[str], email_ids: list[str]) -> None:
    publish_all(webhook_ids)
    publish_all(email_ids, task=EMAIL_TASK)


def publish_all(delivery_ids: list[str], *, task: str = "") -> None:
    """Publish in messages small enough that one task's POSTs fit its time limit."""
    for start in range(0, len(delivery_ids), PER_MESSAGE):
        publish(delivery_ids[start : start + PER_MESSAGE], task=task or DELIVER_TASK)


def publish(delivery_ids: list[str], *, task: str = DELIVER_TASK) -> bool:
    """Ask a worker to deliver these rows; if the broker is down the sweep sends them later."""
    try:
        current_app.send_task(task, args=[delivery_ids])
    except Exception:  # the rows are committed: losing the nudge only delays them
        logger.warning("could not publish %d webhook deliveries; the sweep will", len(delivery_ids))
        return False
    return True


@transaction.atomic(durable=True)
def lease_due(
    model: type[WebhookDelivery | EmailDelivery] = WebhookDelivery, *, limit: int = 500
) -> list[str]:
    """Lease what is due and not in anyone's hands; return the ids for the sweep to publish.

    Due: pending and ``next_attempt_at`` passed, not already handed out by a sweep whose
    lease still runs; or delivering with its lease expired (the worker died mid-POST).
    """
    now = timezone.now()
    due = Q(status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now) & (
        Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now)
    )
    abandoned = Q(status=WebhookDelivery.Status.DELIVERING, lease_expires_at__lt=now)
    ids = list(
        model.objects.select_for_update(skip_locked=True)
        .filter(due | abandoned)
        .order_by("next_attempt_at")
        .values_list("id", flat=True)[:limit]
    )
    model.objects.filter(pk__in=ids).update(
        status=WebhookDelivery.Status.PENDING, lease_expires_at=now + _lease()
    )
    return [str(pk) for pk in ids]


def sweep() -> int:
    """Publish every due delivery, in batches; return how many."""
    ids, emails = lease_due(WebhookDelivery), lease_due(EmailDelivery)
    publish_all(ids)
    publish_all(emails, task=EMAIL_TASK)
    return len(ids) + len(emails)


@transaction.atomic(durable=True)
def replay_deliveries(*, delivery_ids: list[Any]) -> int:
    """Give dead or failing deliveries a fresh series of attempts, same webhook-id; return how many."""
    replayable = (
        WebhookDelivery.objects.select_for_update()
        .filter(pk__in=delivery_ids)
        .filter(
            Q(status=WebhookDelivery.Status.DEAD) | Q(status=WebhookDelivery.Status.PENDING, attempts__gt=0)
        )
    )
    ids = [str(pk) for pk in replayable.values_list("id", flat=True)]
    WebhookDelivery.objects.filter(pk__in=ids).update(
        status=WebhookDelivery.Status.PENDING,
        attempts=0,
        next_attempt_at=timezone.now(),
        lease_expires_at=None,
    )
    if ids:
        transaction.on_commit(lambda: publish_all(ids))
    return len(ids)


def _lease() -> timedelta:
    return timedelta(seconds=settings.CUSTODIAN_WEBHOOK_LEASE_SECONDS)


@transaction.atomic
def set_email_preference(*, user: Any, mode: str) -> EmailPreference:
    """Record how ``user`` hears of reviews, and move the messages not yet sent to match.

    Turning email off drops the person's unsent messages (nothing more reaches them); a
    switch to the digest holds them for the next digest hour; a switch back to each-at-once
    makes held digest messages due now. Messages being sent right now are left to finish.
    """
    preference, _ = EmailPreference.objects.update_or_create(user=user, defaults={"mode": mode})
    unsent = EmailDelivery.objects.filter(user=user, status=EmailDelivery.Status.PENDING)
    now = timezone.now()
    if mode == EmailPreference.Mode.OFF:
        unsent.delete()
    elif mode == EmailPreference.Mode.DIGEST:
        unsent.filter(digest=False).update(digest=True, next_attempt_at=next_digest(now))
    else:
        unsent.filter(digest=True).update(digest=False, next_attempt_at=now)
    return preference
