"""Who may read /metrics: only the holder of CUSTODIAN_METRICS_TOKEN; no token configured, no endpoint."""

import os

import pytest
from django.test import Client

from memory_core.models import AccessEvent
from tenancy.models import DeniedRequest
from tenancy.services import issue_user_token
from tests.factories import make_person
from tests.metrics.scraping import bearer, parse

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"


def get(token: str | None = None, *, scheme: str = "Bearer"):
    headers = {"HTTP_AUTHORIZATION": f"{scheme} {token}"} if token is not None else {}
    return Client().get("/metrics", **headers)


def test_without_a_configured_token_the_endpoint_does_not_exist(settings):
    settings.CUSTODIAN_METRICS_TOKEN = ""
    response = get("anything")
    assert response.status_code == 404
    assert response["Content-Type"] == PROBLEM and response.json()["code"] == "not_found"


def test_with_metrics_turned_off_even_the_right_token_gets_404(metrics_token, settings):
    settings.CUSTODIAN_METRICS = False
    response = get(metrics_token)
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_a_scrape_without_a_token_is_refused(metrics_token):
    response = get()
    assert response.status_code == 401
    assert response["Content-Type"] == PROBLEM and response.json()["code"] == "not_authenticated"
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert "custodian_" not in response.content.decode()


@pytest.mark.parametrize("presented", ["metrics-wrong", "metrics-" + "k" * 39, "metrics-" + "k" * 41, ""])
def test_a_wrong_token_is_refused(metrics_token, presented):
    response = get(presented)
    assert response.status_code == 401 and response.json()["code"] == "not_authenticated"


def test_the_right_token_under_another_scheme_is_refused(metrics_token):
    assert get(metrics_token, scheme="Basic").status_code == 401


def test_an_agent_token_is_not_a_metrics_token(metrics_token, agent):
    assert agent.client.get("/api/v1/proposals/").status_code == 200  # a good agent token
    response = get(agent.token)
    assert response.status_code == 401 and response.json()["code"] == "not_authenticated"


def test_a_personal_token_is_not_a_metrics_token(metrics_token, agent):
    _, raw = issue_user_token(user=make_person("pm-metrics", agent.tenant))
    assert get(raw).status_code == 401


def test_the_metrics_token_answers_prometheus_text(metrics_token):
    response = get(metrics_token)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    scrape = parse(response.content.decode())
    assert scrape.value("custodian_metrics_database_up") == 1
    assert "custodian_http_request_duration_seconds" in scrape.families


def test_the_metrics_token_is_not_an_agent_token(metrics_token):
    response = Client().get("/api/v1/proposals/", HTTP_AUTHORIZATION=bearer()["Authorization"])
    assert response.status_code == 401


def test_scrapes_are_never_throttled_nor_recorded(metrics_token, settings):
    settings.CUSTODIAN_API_RATE = "2/min"
    answers = [get(metrics_token).status_code for _ in range(6)]
    assert answers == [200] * 6
    assert not DeniedRequest.objects.exists()
    assert not AccessEvent.objects.exists()


def test_a_refused_scrape_is_audited_as_a_denied_request(metrics_token):
    get("metrics-guess")
    denied = DeniedRequest.objects.get()
    assert (denied.path, denied.status, denied.code) == ("/metrics", 401, "not_authenticated")


@pytest.mark.parametrize(
    "accept", ["text/plain", "application/openmetrics-text; version=1.0.0", "application/json", "*/*"]
)
def test_any_accept_header_gets_the_text_format(metrics_token, accept):
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {metrics_token}", HTTP_ACCEPT=accept)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")


def test_a_short_metrics_token_fails_the_system_check(settings):
    from metrics.checks import check_metrics_settings

    settings.CUSTODIAN_METRICS_TOKEN = "too-short"
    assert [problem.id for problem in check_metrics_settings()] == ["metrics.E001"]


def test_a_missing_multiprocess_directory_stops_start_up_with_one_line(tmp_path):
    import subprocess
    import sys

    from tests.workers import BASE_DIR

    completed = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=BASE_DIR,
        env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "missing")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode != 0
    assert (
        completed.stderr.strip()
        .splitlines()[-1]
        .startswith("django.core.exceptions.ImproperlyConfigured: PROMETHEUS_MULTIPROC_DIR=")
    )


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_no_method_tells_an_unconfigured_endpoint_from_a_missing_one(settings, method):
    settings.CUSTODIAN_METRICS_TOKEN = ""
    response = getattr(Client(), method)("/metrics")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_a_write_with_the_token_is_not_allowed(metrics_token):
    response = Client().post("/metrics", HTTP_AUTHORIZATION=f"Bearer {metrics_token}")
    assert response.status_code == 405 and response.json()["code"] == "method_not_allowed"
