"""Project configuration: settings, URLs, the Celery app and the API plumbing."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
