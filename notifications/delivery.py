"""Posting one delivery: claim it (committed), POST it, record the attempt and what follows.

Claiming counts the attempt in its own transaction before the POST, so a worker killed
mid-POST still used one: the bound holds even for a delivery that crashes every worker.
"""

import random
import re
import time
from dataclasses import dataclass
from datetime import timedelta

import httpx
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from notifications import signing
from notifications.models import DeliveryAttempt, WebhookDelivery

Status = WebhookDelivery.Status
_UNSAFE = re.compile(r"[^\x20-\x7e]+")


@dataclass(frozen=True)
class Result:
    status_code: int | None
    error_class: str
    excerpt: str
    duration_ms: int

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def deliver(delivery_id: str) -> str | None:
    """Make one attempt at a due delivery; return its status after, or None if it was not ours."""
    delivery = claim(delivery_id)
    if delivery is None:
        return None
    started = timezone.now()
    result = post(delivery)
    return record_attempt(delivery_id, started=started, result=result)


@transaction.atomic(durable=True)
def claim(delivery_id: str) -> WebhookDelivery | None:
    """Take a due delivery for one attempt, or None: delivered, dead, not due, or another worker's."""
    delivery = (
        WebhookDelivery.objects.select_for_update(of=("self",))
        .select_related("endpoint")
        .filter(pk=delivery_id)
        .first()
    )
    now = timezone.now()
    if delivery is None or delivery.status in (Status.DELIVERED, Status.DEAD):
        return None
    if delivery.status == Status.DELIVERING and delivery.lease_expires_at and delivery.lease_expires_at > now:
        return None
    if delivery.status == Status.PENDING and delivery.next_attempt_at > now:
        return None
    if delivery.attempts >= settings.CUSTODIAN_WEBHOOK_MAX_ATTEMPTS or not delivery.endpoint.active:
        delivery.status, delivery.lease_expires_at = Status.DEAD, None
        delivery.last_error = delivery.last_error or "endpoint inactive"
        delivery.save(update_fields=["status", "lease_expires_at", "last_error"])
        return None
    delivery.attempts += 1
    delivery.status = Status.DELIVERING
    delivery.lease_expires_at = now + timedelta(seconds=settings.CUSTODIAN_WEBHOOK_LEASE_SECONDS)
    delivery.save(update_fields=["attempts", "status", "lease_expires_at"])
    return delivery


def post(delivery: WebhookDelivery) -> Result:
    """POST the signed body once, with a short timeout and no redirects followed."""
    content = signing.body(delivery)
    headers = signing.headers(delivery, content, now=timezone.now())
    started = time.monotonic()
    try:
        response = httpx.post(
            delivery.endpoint.url,
            content=content.encode(),
            headers=headers,
            timeout=settings.CUSTODIAN_WEBHOOK_TIMEOUT_SECONDS,
            follow_redirects=False,
        )
    except httpx.HTTPError as exc:
        return Result(None, type(exc).__name__, "", _ms_since(started))
    excerpt = "" if 200 <= response.status_code < 300 else _UNSAFE.sub(" ", response.text[:120]).strip()
    return Result(response.status_code, "", excerpt, _ms_since(started))


@transaction.atomic(durable=True)
def record_attempt(delivery_id: str, *, started, result: Result) -> str:
    """Record the attempt; delivered, dead past the bound, or due again after a backoff with jitter."""
    delivery = WebhookDelivery.objects.select_for_update().get(pk=delivery_id)
    DeliveryAttempt.objects.create(
        delivery=delivery,
        started_at=started,
        duration_ms=result.duration_ms,
        status_code=result.status_code,
        error_class=result.error_class,
        excerpt=result.excerpt,
    )
    delivery.last_status_code = result.status_code
    delivery.last_error = result.error_class or ("" if result.ok else f"HTTP {result.status_code}")
    delivery.lease_expires_at = None
    now = timezone.now()
    if result.ok:
        delivery.status, delivery.delivered_at = Status.DELIVERED, now
    elif delivery.attempts >= settings.CUSTODIAN_WEBHOOK_MAX_ATTEMPTS:
        delivery.status = Status.DEAD
    else:
        delivery.status = Status.PENDING
        delivery.next_attempt_at = now + backoff(delivery.attempts)
    delivery.save()
    return delivery.status


def backoff(attempts: int) -> timedelta:
    """Exponential in the attempts made, capped, with jitter so failing receivers are not hit in step."""
    base = settings.CUSTODIAN_WEBHOOK_RETRY_BASE_SECONDS * 2 ** max(attempts - 1, 0)
    ceiling = min(base, settings.CUSTODIAN_WEBHOOK_RETRY_MAX_SECONDS)
    return timedelta(seconds=ceiling * random.uniform(0.5, 1.0))  # noqa: S311 (jitter, not a secret)


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
