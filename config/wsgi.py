import gc
import os

from django.core.wsgi import get_wsgi_application

from config.environment import load_settings_or_exit
from telemetry.tracing import configure_tracing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
load_settings_or_exit()
# Before the handler reads MIDDLEWARE: the Django instrumentation adds its own. gunicorn imports
# this module in each worker after the fork (no preload), runserver in its serving process.
configure_tracing("custodian-web")
application = get_wsgi_application()
if (
    os.environ.get("CUSTODIAN_SERVE_STATIC") == "1"
):  # bin/run-all's demo; a real deployment's proxy serves them
    from django.contrib.staticfiles.handlers import StaticFilesHandler

    application = StaticFilesHandler(application)

# Load the lemma tables recall's query analysis uses now, not in a worker's first search.
from memory_core.search import query_groups  # noqa: E402

query_groups("warm")

# What the worker has loaded lives as long as it does: keep it out of the collector's full
# passes, which would otherwise walk these ~175,000 objects (about 90 ms) in the middle of
# whichever request triggers one. Garbage first, so none of it is kept for good.
gc.collect()
gc.freeze()
# A search frees nearly all it allocates by reference counting; at the default threshold (700)
# the young generation is still walked three or four times a search, about 0.7 ms of it.
gc.set_threshold(20_000, 10, 10)
