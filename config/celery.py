"""The Celery app. Settings live in Django settings under the ``CELERY_`` prefix."""

import logging.config
import os
from typing import Any

from celery import Celery
from celery.signals import celeryd_init, setup_logging, worker_process_init

from config.environment import check_environment_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
check_environment_or_exit()  # not the settings themselves: config.gunicorn sets some after this

app = Celery("custodian")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@setup_logging.connect
def _log_as_django_does(**kwargs: Any) -> None:
    """Keep Celery from installing its own handlers: workers and beat log through ``LOGGING`` too."""
    from django.conf import settings

    from telemetry.logs import configure_structlog

    logging.config.dictConfig(settings.LOGGING)
    logging.captureWarnings(True)
    configure_structlog()


@celeryd_init.connect
def _no_banner_in_json(instance: Any, **kwargs: Any) -> None:
    """JSON logs are one object per line: the worker's start-up banner (plain text) stays out of them."""
    from django.conf import settings

    if settings.CUSTODIAN_LOG_FORMAT == "json":
        instance.quiet = True


@worker_process_init.connect
def _start_tracing(**kwargs: Any) -> None:
    """Each worker process starts its own exporter thread, after the fork (off unless configured)."""
    from telemetry.tracing import configure_tracing

    configure_tracing("custodian-executor")
