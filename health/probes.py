"""Readiness checks: each cheap and bounded, each answering ok or a short reason, none raising.

What a check may say is public (GET /readyz needs no credential): its name, ok or not, a
short reason and ages in seconds; never a host, a URL, a tenant or an exception's message.
"""

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import redis
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import connection
from django.db.models import Case, Count, F, Max, Min, Q, When
from django.utils import timezone
from redis.backoff import NoBackoff
from redis.retry import Retry

from health.models import WorkerHeartbeat
from notifications.models import Delivery, EmailDelivery, WebhookDelivery
from proposals.models import OutboxEntry

logger = logging.getLogger(__name__)

# Connect and reply timeout for each Redis a check talks to, with no retry.
REDIS_TIMEOUT_SECONDS = 1.0
PROBE_KEY = "custodian:readyz"


@dataclass(frozen=True)
class Outcome:
    """What one check found: ``ok``, else a short ``reason``; ``figures``: ages in whole seconds, counts."""

    ok: bool
    reason: str = ""
    figures: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        body: dict[str, object] = {"ok": self.ok, **self.figures}
        if self.reason:
            body["reason"] = self.reason
        return body


def check_database(now: datetime) -> Outcome:
    """The database answers a query."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return Outcome(ok=True)


def check_broker(now: datetime) -> Outcome:
    """Celery's broker takes a write: Redis answers, or the filesystem broker's folders are writable."""
    url = settings.CELERY_BROKER_URL
    if url.startswith("filesystem:"):
        options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
        folders = {options.get(name) for name in ("data_folder_in", "data_folder_out", "processed_folder")}
        unusable = [folder for folder in folders if not folder or not _writable_folder(Path(str(folder)))]
        if unusable:
            return Outcome(ok=False, reason="broker folder missing or not writable")
        return Outcome(ok=True)
    if url.startswith(("redis:", "rediss:", "unix:")):
        return _redis_takes_a_write(url)
    return Outcome(ok=False, reason="unknown broker transport")


def check_cache(now: datetime) -> Outcome:
    """The shared cache (throttle counters, nudge coalescing) takes a write and reads it back."""
    cache = caches["default"]
    if isinstance(cache, RedisCache):
        location = settings.CACHES["default"]["LOCATION"]  # the first server is the one written to
        servers = location if isinstance(location, list | tuple) else str(location).split(",")
        return _redis_takes_a_write(str(servers[0]))
    token = os.urandom(8).hex()
    cache.set(PROBE_KEY, token, timeout=10)
    if cache.get(PROBE_KEY) != token:
        return Outcome(ok=False, reason="read back differs")
    return Outcome(ok=True)


def check_worker(now: datetime) -> Outcome:
    """An executor worker was seen within ``CUSTODIAN_READY_WORKER_SECONDS`` (``health.heartbeat``)."""
    bound = settings.CUSTODIAN_READY_WORKER_SECONDS
    seen = WorkerHeartbeat.objects.aggregate(
        latest=Max("seen_at"), recent=Count("pk", filter=Q(seen_at__gte=now - timedelta(seconds=bound)))
    )
    if seen["latest"] is None:
        return Outcome(ok=False, reason="no worker seen")
    age = _age(now, seen["latest"])
    figures = {"age_seconds": age, "workers_seen": seen["recent"]}
    if seen["recent"] == 0:
        return Outcome(ok=False, reason=f"no worker seen for over {bound} s", figures=figures)
    return Outcome(ok=True, figures=figures)


def check_outbox(now: datetime) -> Outcome:
    """Nothing has waited to be applied longer than ``CUSTODIAN_READY_OUTBOX_SECONDS``.

    Due as the sweep reads it (``executor.services``): pending since ``available_at``, or
    dispatched since its lease ran out. Two queries, each the head of a partial index.
    """
    bound = settings.CUSTODIAN_READY_OUTBOX_SECONDS
    pending = (
        OutboxEntry.objects.filter(status=OutboxEntry.Status.PENDING, available_at__lte=now)
        .order_by("available_at")
        .values_list("available_at", flat=True)
        .first()
    )
    expired = (
        OutboxEntry.objects.filter(status=OutboxEntry.Status.DISPATCHED, lease_expires_at__lt=now)
        .order_by("lease_expires_at")
        .values_list("lease_expires_at", flat=True)
        .first()
    )
    oldest = min((moment for moment in (pending, expired) if moment is not None), default=None)
    age = 0 if oldest is None else _age(now, oldest)
    figures = {"oldest_due_seconds": age}
    if age > bound:
        return Outcome(ok=False, reason=f"an entry has been due for over {bound} s", figures=figures)
    return Outcome(ok=True, figures=figures)


PENDING, DELIVERING = Delivery.Status.PENDING, Delivery.Status.DELIVERING
NOTIFICATION_ROWS: tuple[type[Delivery], ...] = (WebhookDelivery, EmailDelivery)


def check_notifications(now: datetime) -> Outcome:
    """No webhook or reviewer email has waited for a worker over ``CUSTODIAN_READY_NOTIFICATIONS_SECONDS``.

    Due as ``notifications.services.sweep`` reads it: pending since ``next_attempt_at``, or
    delivering since its lease ran out. A retry scheduled later is not due, so a receiver that
    keeps failing (backing off, then dead-lettered) never makes this process unready; only
    a notifications queue nobody consumes does. One query per table, on its partial index.
    """
    bound = settings.CUSTODIAN_READY_NOTIFICATIONS_SECONDS
    heads = [_oldest_due(model, now) for model in NOTIFICATION_ROWS]
    oldest = min((moment for moment in heads if moment is not None), default=None)
    age = 0 if oldest is None else _age(now, oldest)
    figures = {"oldest_due_seconds": age}
    if age > bound:
        return Outcome(ok=False, reason=f"a notification has been due for over {bound} s", figures=figures)
    return Outcome(ok=True, figures=figures)


def _oldest_due(model: type[Delivery], now: datetime) -> datetime | None:
    due = Q(status=PENDING, next_attempt_at__lte=now) | Q(status=DELIVERING, lease_expires_at__lt=now)
    since = Case(When(status=PENDING, then=F("next_attempt_at")), default=F("lease_expires_at"))
    oldest: datetime | None = model._default_manager.filter(due).aggregate(oldest=Min(since))["oldest"]
    return oldest


Check = Callable[[datetime], Outcome]
# In order; the last three read the database, so they are skipped when it does not answer.
CHECKS: dict[str, Check] = {
    "database": check_database,
    "broker": check_broker,
    "cache": check_cache,
    "worker": check_worker,
    "outbox": check_outbox,
    "notifications": check_notifications,
}
NEED_DATABASE = frozenset({"worker", "outbox", "notifications"})


def run_checks(*, exclude: frozenset[str] = frozenset()) -> dict[str, Outcome]:
    """Run every check not excluded; one that raises is a failed check named by its error's type."""
    now = timezone.now()
    outcomes: dict[str, Outcome] = {}
    for name, check in CHECKS.items():
        if name in exclude:
            continue
        if name in NEED_DATABASE and "database" in outcomes and not outcomes["database"].ok:
            outcomes[name] = Outcome(ok=False, reason="database unavailable")
            continue
        outcomes[name] = _run(name, check, now)
    return outcomes


def _run(name: str, check: Check, now: datetime) -> Outcome:
    try:
        return check(now)
    except Exception as exc:  # a probe answers; what failed is the answer
        logger.warning("readiness check %s failed", name, exc_info=True)
        return Outcome(ok=False, reason=_reason(exc))


def _reason(exc: Exception) -> str:
    if isinstance(exc, redis.TimeoutError):
        return "timed out"
    if isinstance(exc, redis.ConnectionError):
        return "unreachable"
    return type(exc).__name__  # a class name, never the message (which may name hosts)


def _redis_takes_a_write(url: str) -> Outcome:
    client = redis.Redis.from_url(
        url,
        socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
        socket_timeout=REDIS_TIMEOUT_SECONDS,
        retry=Retry(NoBackoff(), 0),
    )
    try:
        client.set(PROBE_KEY, "1", ex=10)  # a write: a full or read-only Redis refuses it
    finally:
        client.close()
    return Outcome(ok=True)


def _writable_folder(folder: Path) -> bool:
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def _age(now: datetime, moment: datetime) -> int:
    return max(0, int((now - moment).total_seconds()))
