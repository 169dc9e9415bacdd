"""The Celery app. Settings live in Django settings under the ``CELERY_`` prefix."""

import os

from celery import Celery

from config.environment import load_settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
load_settings_or_exit()

app = Celery("custodian")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
