"""No label carries an id, a tenant's text or a path: only patterns, codes and bounded names."""

import re
import uuid

import pytest
from django.test import Client

from proposals.models import Proposal
from tests.factories import apply_released, create_payload, factor_fact, make_evidence, user_preference
from tests.metrics.scraping import bearer, parse

pytestmark = pytest.mark.django_db

UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.I)
LABEL_NAMES = {
    "route",
    "method",
    "status",
    "code",
    "classification",
    "rule",
    "outcome",
    "task",
    "surface",
    "tenant",
    "le",
}


def test_labels_never_carry_ids_paths_or_content(agent, metrics_token, django_capture_on_commit_callbacks):
    statement = "Alice prefers summaries in purple ink"
    payload = create_payload(user_preference(content={"statement": statement}), [make_evidence(agent.agent)])
    with django_capture_on_commit_callbacks(execute=True):
        created = agent.client.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="c-1")
        assert created.status_code == 201, created.content
        apply_released(Proposal.objects.get(pk=created.json()["id"]))
        reviewed = agent.client.post(
            "/api/v1/proposals/",
            create_payload(factor_fact(), [make_evidence(agent.agent)]),
            format="json",
            HTTP_IDEMPOTENCY_KEY="c-2",
        )
        assert reviewed.status_code == 201
    proposal_id, memory_id = created.json()["id"], created.json()["memory_id"]
    agent.client.get(f"/api/v1/proposals/{proposal_id}/")
    agent.client.get(f"/api/v1/memories/{memory_id}/")
    agent.client.get(f"/api/v1/proposals/{uuid.uuid4()}/")  # 404 on a pattern that matched
    agent.client.get(f"/api/v1/no-such-thing/{uuid.uuid4()}/purple-ink")  # 404 no pattern matched
    Client().get(f"/{uuid.uuid4()}?q=purple")
    body = (
        Client().get("/metrics", HTTP_AUTHORIZATION=bearer(metrics_token)["Authorization"]).content.decode()
    )
    scrape = parse(body)

    pairs = scrape.label_values()
    assert {name for name, _ in pairs} <= LABEL_NAMES
    assert not [value for _, value in pairs if UUID.search(value)]
    for forbidden in (proposal_id, memory_id, "purple", agent.agent.name, statement):
        assert forbidden not in body
    routes = {value for name, value in pairs if name == "route"}
    assert "/api/v1/proposals/<uuid:proposal_id>/" in routes
    assert "/api/v1/memories/<uuid:memory_id>/" in routes
    assert "unmatched" in routes and not [route for route in routes if "no-such-thing" in route]
    tenants = {value for name, value in pairs if name == "tenant"}
    assert tenants == {agent.tenant.name}  # its review queue, the one place tenant names appear
    assert {labels["tenant"] for labels, _ in scrape.matching("custodian_review_queue_depth")} == tenants
    assert scrape.value("custodian_receipts_total", outcome="applied") >= 1


def test_a_code_or_rule_that_is_not_an_identifier_is_folded():
    from metrics import labels

    assert labels.word("deny-duplicate") == "deny-duplicate"
    for id_like in ("c5bd40de-17c6-4710-9714-41256aec0090", "c5bd40de17c64710", "run-2026", "e3b0c442"):
        assert labels.word(id_like) == "(other)", id_like
    assert labels.word(str(uuid.uuid4())) == "(other)"
    assert labels.word("Alice prefers weekly summaries") == "(other)"
    assert labels.word("x" * 65) == "(other)"
    assert labels.method("PROPFIND") == "(other)"


def test_every_rule_id_outcome_and_classification_is_kept_as_it_is():
    from django.conf import settings

    from executor.models import Receipt
    from metrics import labels
    from proposals.policy.rules import load_rule_set

    rules = [rule.id for rule in load_rule_set(settings.CUSTODIAN_POLICY_FILE).rules]
    values = [*rules, *Receipt.Outcome.values, *Proposal.Classification.values]
    assert [value for value in values if labels.word(value) != value] == []
