import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Load the lemma tables recall's query analysis uses now, not in a worker's first search.
from memory_core.search import query_groups  # noqa: E402

query_groups("warm")
