"""Build one scrape: this host's processes' metrics, then the database-derived gauges.

With ``PROMETHEUS_MULTIPROC_DIR`` set (gunicorn, Celery: ``metrics.multiprocess``) the values
come from every process's files there, added up by ``MultiProcessCollector``; without it from
this process alone (the test suite, ``runserver``), with its process and GC metrics.
"""

import os
from collections.abc import Iterable

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from metrics.collectors import DatabaseCollector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _ThisProcess(Collector):
    """The default registry's metrics (this process's), inside a registry built per scrape."""

    def collect(self) -> Iterable[Metric]:
        return REGISTRY.collect()


def multiprocess_dir() -> str:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")


def scrape() -> bytes:
    """Return the text exposition of every metric, built now."""
    registry = CollectorRegistry(auto_describe=False)
    if multiprocess_dir():
        MultiProcessCollector(registry)
    else:
        registry.register(_ThisProcess())
    registry.register(DatabaseCollector())
    return generate_latest(registry)
