"""Every metric a Custodian process records in itself, in one place (the scrape adds those of ``collectors``).

No label carries an id, a name an agent chose or any text: routes are URL patterns, codes and
outcomes come from closed sets in the code, rule ids from the policy file (``labels``).
Under ``PROMETHEUS_MULTIPROC_DIR`` each process writes its values to files there and the
scrape adds them up; without it they live in this process's memory (tests, the dev server).
"""

import os

from django.core.exceptions import ImproperlyConfigured
from prometheus_client import Counter, Gauge, Histogram, disable_created_metrics

from metrics.multiprocess import VARIABLE

_directory = os.environ.get(VARIABLE, "")
if _directory and not (os.path.isdir(_directory) and os.access(_directory, os.W_OK | os.X_OK)):
    # Said once, here: the first metric below would fail on its file with a bare OSError.
    raise ImproperlyConfigured(
        f"{VARIABLE}={_directory} is not a writable directory: create it empty before the "
        "processes start (bin/run-all does), or unset it"
    )

# The ``_created`` series: not written in multiprocess mode, so left out everywhere alike.
disable_created_metrics()

# Seconds: a submit is ~10 ms, a slow page a second or two, gunicorn's timeout 30 s.
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# A batch of up to CUSTODIAN_EXECUTOR_BATCH entries takes tens of milliseconds to seconds.
APPLY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
# Recall's target is 50 ms at the 95th percentile: finer below it.
RECALL_BUCKETS = (0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

REQUEST_DURATION = Histogram(
    "custodian_http_request_duration_seconds",
    "Time to answer an HTTP request, by URL route pattern, method and status code.",
    ["route", "method", "status"],
    buckets=REQUEST_BUCKETS,
)
REQUESTS_IN_PROGRESS = Gauge(
    "custodian_http_requests_in_progress",
    "Requests being answered now, summed over the live web processes.",
    multiprocess_mode="livesum",
)
REFUSALS = Counter(
    "custodian_refusals",
    "Problem+json answers (status 400 and above), by problem code and status.",
    ["code", "status"],
)
RECALL_DURATION = Histogram(
    "custodian_recall_duration_seconds",
    "Time to answer a recall search, by surface (rest: /api/v1/recall/search, mgp: /mgp/search).",
    ["surface"],
    buckets=RECALL_BUCKETS,
)
PROPOSALS_SUBMITTED = Counter(
    "custodian_proposals_submitted",
    "Proposals stored, by the policy's classification and the id of the rule that matched.",
    ["classification", "rule"],
)
RECEIPTS = Counter(
    "custodian_receipts",
    "Receipts the executor appended, by outcome.",
    ["outcome"],
)
APPLY_DURATION = Histogram(
    "custodian_apply_duration_seconds",
    "Time an executor task spent applying entries (one call: up to CUSTODIAN_EXECUTOR_BATCH), by task.",
    ["task"],
    buckets=APPLY_BUCKETS,
)
