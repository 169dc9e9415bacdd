"""gunicorn settings shared by ``make run`` (bin/run-all) and the benchmark stack (bench/stack.py).

Threaded workers (``gthread``) keep a client's connection open between requests (keep-alive):
sync workers close it after every response, so an agent posting one proposal after another
reconnected for each. Each thread holds its own database connection (Django's connections are
per thread), so a server holds at most workers x threads of them, each kept for
``CONN_MAX_AGE`` and checked at every request's start and end as before. Command-line flags
(``--workers``, ``--bind``) override these.
"""

import os

worker_class = "gthread"
workers = int(os.environ.get("CUSTODIAN_WEB_WORKERS", 2))
threads = int(os.environ.get("CUSTODIAN_WEB_THREADS", 4))
keepalive = 5  # seconds an idle keep-alive connection is held (gunicorn's default is 2)
