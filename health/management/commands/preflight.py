"""``manage.py preflight``: can this process reach what it needs? One line per dependency that cannot.

``make run`` and the container entrypoint call it first, so an unreachable database or Redis is
named before migrate's or Celery's traceback would bury it. ``--wait`` retries, for services
started beside Custodian (compose) that take a few seconds to accept connections.
"""

import os
import time
from urllib.parse import urlsplit

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection
from django.utils import timezone

from health.probes import check_broker, check_cache, check_database

RETRY_SECONDS = 1.0
STARTUP_CHECKS = {"database": check_database, "broker": check_broker, "cache": check_cache}


def where(name: str) -> str:
    """Host and port (or file) of a dependency, never its credentials."""
    if name == "database":
        if connection.vendor == "sqlite":
            return str(connection.settings_dict["NAME"])
        database = connection.settings_dict
        return f"{database['HOST'] or 'local socket'}:{database['PORT'] or 5432}"
    cache_url = str(settings.CACHES["default"].get("LOCATION", ""))
    url = settings.CELERY_BROKER_URL if name == "broker" else cache_url
    parts = urlsplit(url.split(",")[0])
    return f"{parts.hostname}:{parts.port or 6379}" if parts.hostname else (parts.scheme or "in-process")


def first_failure(name: str) -> str:
    """Why ``name`` cannot be used, in one line; empty when it can."""
    try:
        outcome = STARTUP_CHECKS[name](timezone.now())
    except Exception as exc:  # what failed is the answer
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"{name} at {where(name)} does not answer: {reason}"
    finally:
        if name == "database":
            connection.close()  # a retry connects afresh
    return "" if outcome.ok else f"{name} at {where(name)}: {outcome.reason}"


class Command(BaseCommand):
    help = "Check that the database, the broker and the cache answer; name each that does not."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--wait", type=float, default=0, help="keep retrying for this many seconds")

    def handle(self, *args: object, wait: float, **options: object) -> None:
        os.environ.setdefault("PGCONNECT_TIMEOUT", "5")  # libpq's own bound on one connection attempt
        deadline = time.monotonic() + wait
        while True:
            failures = [line for line in map(first_failure, STARTUP_CHECKS) if line]
            if not failures or time.monotonic() >= deadline:
                break
            time.sleep(RETRY_SECONDS)
        if failures:
            self.stderr.write("\n".join(f"custodian: {line}" for line in failures))
            raise SystemExit(1)
        self.stdout.write("custodian: database, broker and cache answer")
