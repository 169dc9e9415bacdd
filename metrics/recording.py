"""The recording API: the few calls that add to a metric, each cheap and never raising.

The web side calls it from ``metrics.middleware``; what other apps do reaches it through
signals (``metrics.receivers``), so no app below ``metrics`` imports it.
"""

import logging

from metrics import instruments, labels

logger = logging.getLogger(__name__)


def request_answered(*, route: str, method: str, status: int, seconds: float, problem_code: str) -> None:
    """Count one answered request: its latency, and its problem code if it is a problem."""
    try:
        status_label = labels.status(status)
        instruments.REQUEST_DURATION.labels(route, labels.method(method), status_label).observe(seconds)
        if problem_code and status >= 400:
            instruments.REFUSALS.labels(labels.word(problem_code), status_label).inc()
    except Exception:  # a metric must never fail a request
        logger.warning("could not record a request's metrics", exc_info=True)


def recall_answered(*, surface: str, seconds: float) -> None:
    try:
        instruments.RECALL_DURATION.labels(labels.word(surface)).observe(seconds)
    except Exception:
        logger.warning("could not record a recall's latency", exc_info=True)


def proposals_submitted(verdicts: list[tuple[str, str]]) -> None:
    """Count stored proposals by classification and matched rule id."""
    try:
        for classification, rule in verdicts:
            instruments.PROPOSALS_SUBMITTED.labels(labels.word(classification), labels.word(rule)).inc()
    except Exception:
        logger.warning("could not count submitted proposals", exc_info=True)


def receipts_appended(outcomes: list[str]) -> None:
    try:
        for outcome in outcomes:
            instruments.RECEIPTS.labels(labels.word(outcome)).inc()
    except Exception:
        logger.warning("could not count receipts", exc_info=True)


def entries_applied(*, task: str, seconds: float) -> None:
    try:
        instruments.APPLY_DURATION.labels(labels.word(task)).observe(seconds)
    except Exception:
        logger.warning("could not record an apply's latency", exc_info=True)
