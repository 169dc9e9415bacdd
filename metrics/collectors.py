"""Gauges computed at scrape time from the database, in the scraping process only.

They are never written to the multiprocess files: each scrape asks the database once
(``metrics.selectors``: four queries), so every web process answers the same and a gauge
cannot outlive the process that set it.
"""

import logging
import math
from collections.abc import Iterator
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from metrics import selectors
from metrics.labels import OTHER

logger = logging.getLogger(__name__)


class DatabaseCollector(Collector):
    """The outbox backlog, review queues, worker heartbeat and chain verification, read now."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        now = timezone.now()
        up = GaugeMetricFamily(
            "custodian_metrics_database_up", "1 if the scrape could read the database-derived gauges, else 0."
        )
        try:
            families = [*_outbox(now), *_reviews(now), *_workers(now), *_verifications(now)]
        except DatabaseError:
            logger.warning("metrics: the database did not answer the scrape", exc_info=True)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from families


def _age(now: datetime, moment: datetime | None) -> float:
    """Seconds since ``moment``; +Inf when there is none (never seen: as bad as it gets for an alert)."""
    if moment is None:
        return math.inf
    return max(0.0, (now - moment).total_seconds())


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)


def _outbox(now: datetime) -> list[GaugeMetricFamily]:
    backlog = selectors.outbox_backlog(now)
    oldest = 0.0 if backlog.oldest_due_at is None else _age(now, backlog.oldest_due_at)
    return [
        _gauge("custodian_outbox_due_entries", "Outbox entries due for the executor now.", backlog.due),
        _gauge(
            "custodian_outbox_oldest_due_age_seconds",
            "Seconds the longest-waiting due outbox entry has been due (0 when none is).",
            oldest,
        ),
    ]


def _reviews(now: datetime) -> list[GaugeMetricFamily]:
    """Per tenant, the CUSTODIAN_METRICS_TENANT_LABELS deepest queues by name; the rest as ``(other)``."""
    queues = selectors.review_queues()
    cap = settings.CUSTODIAN_METRICS_TENANT_LABELS
    named, folded = queues[:cap], queues[cap:]
    depth = GaugeMetricFamily(
        "custodian_review_queue_depth", "Proposals waiting for a reviewer, by tenant.", labels=["tenant"]
    )
    oldest = GaugeMetricFamily(
        "custodian_review_oldest_pending_age_seconds",
        "Seconds the oldest proposal waiting for a reviewer has waited, by tenant.",
        labels=["tenant"],
    )
    for queue in named:
        depth.add_metric([queue.tenant], queue.depth)
        oldest.add_metric([queue.tenant], _age(now, queue.oldest_at))
    if folded:
        depth.add_metric([OTHER], sum(queue.depth for queue in folded))
        oldest.add_metric([OTHER], _age(now, min(queue.oldest_at for queue in folded)))
    return [depth, oldest]


def _workers(now: datetime) -> list[GaugeMetricFamily]:
    seen = selectors.workers(now)
    return [
        _gauge(
            "custodian_worker_heartbeat_age_seconds",
            "Seconds since an executor worker was last seen (+Inf if none ever was).",
            _age(now, seen.latest_seen_at),
        ),
        _gauge(
            "custodian_workers_seen",
            "Executor worker nodes seen within CUSTODIAN_READY_WORKER_SECONDS.",
            seen.recent,
        ),
    ]


def _verifications(now: datetime) -> list[GaugeMetricFamily]:
    found = selectors.verifications()
    return [
        _gauge(
            "custodian_chain_verification_age_seconds",
            "Seconds since a receipt-chain verification last finished (+Inf if none ever did).",
            _age(now, found.latest_finished_at),
        ),
        _gauge(
            "custodian_chain_verification_broken_tenants",
            "Tenants whose latest finished chain verification found the chain broken.",
            found.broken_tenants,
        ),
    ]
