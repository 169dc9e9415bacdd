"""Fixtures for fuzzing the API in-process through the Django WSGI handler."""

import pytest
from django.core import signals
from django.db import close_old_connections


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """Let in-process WSGI requests run inside the test's transaction.

    The bare ``WSGIHandler`` calls ``close_old_connections`` on every request start and
    finish; inside pytest-django's per-test atomic block that closes the connection and
    marks the transaction for rollback. Django's own test client detaches the same
    receivers while it handles a request; this does it for the whole test.
    """
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def _no_throttling(settings):
    """Lift the rate limit: unauthenticated requests count against 127.0.0.1; ``make fuzz`` sends thousands.

    A 429 would hide the answer under test.
    """
    settings.CUSTODIAN_API_RATE = "100000/s"  # a one-second window keeps the throttle history short
