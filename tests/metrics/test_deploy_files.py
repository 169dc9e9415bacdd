"""The dashboard and the alert rules name only metrics the app exports, so neither can drift."""

import json
import re
from pathlib import Path

import pytest
import yaml
from django.test import Client

from tests.metrics.scraping import bearer, parse

pytestmark = pytest.mark.django_db

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
NAME = re.compile(r"\bcustodian_[a-z0-9_]+")
SAMPLE_SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}


def exported_samples(metrics_token: str) -> set[str]:
    """Every sample name a scrape can carry, from the families this app declares."""
    response = Client().get("/metrics", HTTP_AUTHORIZATION=bearer(metrics_token)["Authorization"])
    assert response.status_code == 200
    families = parse(response.content.decode()).families
    return {
        f"{name}{suffix}"
        for name, kind in families.items()
        if name.startswith("custodian_")
        for suffix in SAMPLE_SUFFIXES[kind]
    }


def dashboard_expressions() -> list[str]:
    dashboard = json.loads((DEPLOY / "grafana" / "custodian.json").read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]


def alert_expressions() -> list[str]:
    rules = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text())
    return [rule["expr"] for group in rules["groups"] for rule in group["rules"]]


@pytest.mark.parametrize(
    "expressions", [dashboard_expressions, alert_expressions], ids=["dashboard", "alerts"]
)
def test_every_metric_named_is_exported(metrics_token, expressions):
    named = {name for expression in expressions() for name in NAME.findall(expression)}
    assert len(named) >= 8
    assert named <= exported_samples(metrics_token), named - exported_samples(metrics_token)


def test_the_alerts_cover_backlog_workers_chain_and_review_sla():
    rules = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text())["groups"][0]["rules"]
    by_name = {rule["alert"]: rule for rule in rules}
    assert {
        "CustodianOutboxBacklogGrowing",
        "CustodianNoExecutorWorker",
        "CustodianChainVerificationFailed",
        "CustodianReviewSlaBreached",
    } <= by_name.keys()
    assert all(rule["labels"]["severity"] in {"info", "warning", "critical"} for rule in rules)


def test_every_exported_metric_is_on_the_dashboard(metrics_token):
    shown = {name for expression in dashboard_expressions() for name in NAME.findall(expression)}
    families = {sample.removesuffix("_bucket").removesuffix("_total") for sample in shown}
    exported = {
        name
        for name in parse(
            Client()
            .get("/metrics", HTTP_AUTHORIZATION=bearer(metrics_token)["Authorization"])
            .content.decode()
        ).families
        if name.startswith("custodian_")
    }
    assert exported <= families, exported - families
