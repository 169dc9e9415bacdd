"""The service URLs a process is started with, checked before anything connects.

A mistyped URL otherwise surfaces as a traceback from deep inside dj-database-url or kombu;
here it is one line naming the variable, what it must look like, and how to fall back to the
embedded default. Reachability is ``manage.py preflight``'s job: this module only parses.
"""

import os
import sys
from collections.abc import Callable
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

DATABASE_SCHEMES = ("postgres", "postgresql", "pgsql", "sqlite")
REDIS_SCHEMES = ("redis", "rediss", "unix")


def check_url(name: str, value: str | None, schemes: tuple[str, ...], example: str) -> None:
    """Refuse a set ``value`` whose scheme is not one of ``schemes``, or that names no host or path."""
    if not value:
        return
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - parsing the port is what raises on a malformed one
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not a valid URL ({exc}); for example {example}") from None
    if parts.scheme not in schemes:
        found = f"'{parts.scheme}://'" if parts.scheme else "no scheme"
        raise ImproperlyConfigured(
            f"{name} has {found}; it must start with {' or '.join(f'{s}://' for s in schemes)}, "
            f"for example {example} (unset it for the embedded default)"
        )
    if not (parts.netloc or parts.path.strip("/")):
        raise ImproperlyConfigured(f"{name} names no server; for example {example}")


def check_service_urls(environ: dict[str, str]) -> None:
    """Every service URL Custodian reads, checked at settings load (web, executor, beat, commands)."""
    database_example = "postgres://custodian@127.0.0.1:5432/custodian"
    for name in ("DATABASE_URL", "CUSTODIAN_REPLICA_URL"):
        check_url(name, environ.get(name), DATABASE_SCHEMES, database_example)
    for name in ("REDIS_URL", "CACHE_URL"):
        check_url(name, environ.get(name), REDIS_SCHEMES, "redis://127.0.0.1:6379/0")


def exit_on_misconfiguration(check: Callable[[], object]) -> None:
    """Run ``check``; an ImproperlyConfigured ends the process with its one line (exit status 2)."""
    try:
        check()
    except ImproperlyConfigured as exc:
        sys.stderr.write(f"custodian: {exc}\n")
        raise SystemExit(2) from None


def check_environment_or_exit() -> None:
    """The URL checks alone, without loading Django's settings.

    For ``config`` package imports (the Celery app): gunicorn imports ``config.gunicorn``, which
    sets the web's statement budget in the environment, only after the package itself.
    """
    exit_on_misconfiguration(lambda: check_service_urls(dict(os.environ)))


def load_settings_or_exit() -> None:
    """Load Django's settings now; a misconfiguration ends the process with its one line (exit 2)."""
    from django.conf import settings

    exit_on_misconfiguration(lambda: settings.INSTALLED_APPS)  # touching a setting loads them
