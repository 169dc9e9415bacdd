import pytest

from notifications.models import WebhookEndpoint
from tests.workers import empty_broker


@pytest.fixture
def quick_retries(monkeypatch):
    """Worker settings (read from the environment the worker inherits) that keep retries short."""
    for name, value in {
        "CUSTODIAN_NOTIFY_SWEEP_SECONDS": "1",
        "CUSTODIAN_WEBHOOK_RETRY_BASE_SECONDS": "0.3",
        "CUSTODIAN_WEBHOOK_RETRY_MAX_SECONDS": "2",
        "CUSTODIAN_WEBHOOK_TIMEOUT_SECONDS": "2",
        "CUSTODIAN_WEBHOOK_LEASE_SECONDS": "6",
    }.items():
        monkeypatch.setenv(name, value)
    empty_broker()
    yield monkeypatch
    empty_broker()


def endpoint(tenant, url, *types, **fields) -> WebhookEndpoint:
    made = WebhookEndpoint(tenant=tenant, url=url, event_types=list(types), **fields)
    made.full_clean()
    made.save()
    return made
