"""gunicorn settings shared by ``make run`` (bin/run-all) and the benchmark stack (bench/stack.py).

Sync workers, one request at a time per process and one persistent database connection each.
Threaded workers (``gthread``, ``CUSTODIAN_WEB_THREADS`` > 1) keep a client's connection open
between requests, but measured beside sync workers with wrk on this 2-core machine they gained
nothing (bench/README.md, issue 18, branch throughput2): a submit's ~8 ms of CPU dwarfs a
reconnect on the loopback, and one thread per worker pinned keep-alive connections unevenly.
With threads each thread holds its own database connection (Django's connections are per
thread), at most workers x threads of them. Command-line flags (``--workers``, ``--bind``)
override these.
"""

import os

workers = int(os.environ.get("CUSTODIAN_WEB_WORKERS", 2))
threads = int(os.environ.get("CUSTODIAN_WEB_THREADS", 1))
worker_class = "gthread" if threads > 1 else "sync"
keepalive = 5  # seconds an idle keep-alive connection is held by threaded workers (default 2)
