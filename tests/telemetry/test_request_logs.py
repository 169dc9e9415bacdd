"""The access-log line, the request and correlation ids, and the ids an outbox row keeps."""

import json

import pytest

from proposals.models import OutboxEntry
from tests.factories import create_payload, make_evidence, user_preference

SUBMIT = "/api/v1/proposals/"
STATEMENT = "Alice prefers summaries written in violet ink on Tuesdays"


def _submit(api, agent, statement: str = STATEMENT, **headers):
    memory = user_preference(
        content={"statement": statement, "preference_key": "ink", "preference_value": "violet"}
    )
    body = create_payload(memory, [make_evidence(agent.agent)])
    return api.post(SUBMIT, body, format="json", HTTP_IDEMPOTENCY_KEY="telemetry-1", **headers)


def _access(lines: list[dict]) -> list[dict]:
    return [line for line in lines if line.get("logger") == "custodian.access"]


@pytest.mark.django_db
def test_a_submit_logs_one_access_line_with_route_principal_and_proposal(agent, api, json_lines):
    response = _submit(api, agent)
    assert response.status_code == 201, response.content
    [line] = _access(json_lines())
    assert line["event"] == "request"
    assert (line["method"], line["route"], line["status"]) == ("POST", "api/v1/proposals/", 201)
    assert line["proposal_id"] == response.json()["id"]
    assert (line["agent_id"], line["agent"]) == (str(agent.agent.pk), agent.agent.name)
    assert line["tenant_id"] == str(agent.tenant.pk)
    assert line["request_id"] == response["X-Request-Id"]
    assert line["correlation_id"] == response["X-Correlation-Id"] == response["X-Request-Id"]
    assert isinstance(line["duration_ms"], float) and line["level"] == "info"
    assert agent.token not in json.dumps(line)


@pytest.mark.django_db
def test_the_route_is_the_url_pattern_not_the_path(agent, api, json_lines):
    proposal_id = _submit(api, agent).json()["id"]
    assert api.get(f"{SUBMIT}{proposal_id}/").status_code == 200
    line = _access(json_lines())[-1]
    assert line["route"] == "api/v1/proposals/<uuid:proposal_id>/"
    assert line["proposal_id"] == proposal_id


@pytest.mark.django_db
def test_a_safe_correlation_id_and_request_id_are_kept_and_echoed(agent, api, json_lines):
    response = api.get("/livez", HTTP_X_CORRELATION_ID="order-42:retry.1", HTTP_X_REQUEST_ID="edge-7f3a")
    assert (response["X-Request-Id"], response["X-Correlation-Id"]) == ("edge-7f3a", "order-42:retry.1")
    [line] = _access(json_lines())
    assert (line["request_id"], line["correlation_id"]) == ("edge-7f3a", "order-42:retry.1")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "hostile",
    [
        'x" , "level": "critical',
        "a" * 129,
        "spaces are not allowed",
        "-starts-with-a-dash",
        "ünicode",
        "<script>",
    ],
)
def test_a_hostile_correlation_id_is_replaced_by_the_request_id(api, json_lines, hostile):
    response = api.get("/livez", HTTP_X_CORRELATION_ID=hostile, HTTP_X_REQUEST_ID=hostile)
    request_id = response["X-Request-Id"]
    assert response["X-Correlation-Id"] == request_id != hostile
    assert len(request_id) == 32
    [line] = _access(json_lines())
    assert line["correlation_id"] == line["request_id"] == request_id
    assert all(hostile not in json.dumps(logged) for logged in json_lines())


@pytest.mark.django_db
def test_the_outbox_row_keeps_the_request_and_correlation_ids(agent, api):
    response = _submit(api, agent, HTTP_X_CORRELATION_ID="journey-9")
    entry = OutboxEntry.objects.get(proposal_id=response.json()["id"])
    assert entry.trace_context == {"request_id": response["X-Request-Id"], "correlation_id": "journey-9"}


@pytest.mark.django_db
def test_every_row_of_a_batch_names_the_request(agent, api):
    evidence = [make_evidence(agent.agent)]
    items = [
        {
            "idempotency_key": f"t-{n}",
            "proposal": create_payload(
                user_preference(
                    content={"statement": f"cadence {n}", "preference_key": f"k{n}", "preference_value": "v"}
                ),
                evidence,
            ),
        }
        for n in range(3)
    ]
    response = api.post(
        "/api/v1/proposals/batch", {"items": items}, format="json", HTTP_X_CORRELATION_ID="bulk-1"
    )
    assert response.status_code == 200, response.content
    ids = [result["proposal"]["id"] for result in response.json()["results"]]
    contexts = list(OutboxEntry.objects.filter(proposal_id__in=ids).values_list("trace_context", flat=True))
    assert contexts == [{"request_id": response["X-Request-Id"], "correlation_id": "bulk-1"}] * 3


@pytest.mark.django_db
def test_the_access_log_can_be_switched_off_and_the_ids_stay(api, json_lines, settings):
    settings.CUSTODIAN_ACCESS_LOG = False
    response = api.get("/livez")
    assert response["X-Request-Id"]
    assert _access(json_lines()) == []


@pytest.mark.django_db
def test_a_submitted_statement_and_a_recall_query_never_reach_a_log_line(agent, api, json_lines):
    _submit(api, agent, statement=STATEMENT)
    query = "violet ink tuesday secret-recall-phrase"
    api.post("/api/v1/recall/search", {"query": query}, format="json")
    api.post(
        SUBMIT,
        {"action": "create", "memory": {"content": {"statement": "refused " + STATEMENT}}},
        format="json",
    )
    lines = json_lines()
    assert _access(lines)
    for line in lines:
        text = json.dumps(line)
        assert "violet ink" not in text and "secret-recall-phrase" not in text
