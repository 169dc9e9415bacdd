import pytest

from tests.metrics.scraping import METRICS_TOKEN


@pytest.fixture
def metrics_token(settings) -> str:
    """Metrics on, with a configured token (the default settings have none: /metrics is 404)."""
    settings.CUSTODIAN_METRICS = True
    settings.CUSTODIAN_METRICS_TOKEN = METRICS_TOKEN
    return METRICS_TOKEN
