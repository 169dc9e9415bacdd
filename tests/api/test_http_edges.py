"""What a client gets for requests the API cannot serve as sent: clear problems, never a guess."""

import contextlib
import http.client
import json
from urllib.parse import urlsplit

import pytest
from django.db import connection

from tests.factories import make_person


def test_a_chunked_body_is_refused_with_411_over_a_real_connection(live_server, agent):
    host = urlsplit(live_server.url)
    connection = http.client.HTTPConnection(host.hostname, host.port, timeout=30)
    body = json.dumps({"kind": "backtest_run", "external_ref": "bt-1", "content": {"ic": 0.1}}).encode()
    connection.putrequest("POST", "/api/v1/evidence/")
    connection.putheader("Authorization", f"Bearer {agent.token}")
    connection.putheader("Content-Type", "application/json")
    connection.putheader("Transfer-Encoding", "chunked")
    connection.endheaders()
    connection.send(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
    response = connection.getresponse()
    problem = json.loads(response.read())
    assert (response.status, problem["code"]) == (411, "length_required")
    assert response.getheader("Content-Type") == "application/problem+json"


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("put", "/api/v1/proposals/", 405, "method_not_allowed"),
        ("post", "/api/v1/evidence/", 415, "unsupported_media_type"),
    ],
)
def test_stock_errors_have_real_titles_not_templates(api, method, path, status, code):
    response = getattr(api, method)(path, "x", content_type="text/plain")
    body = response.json()
    assert (response.status_code, body["code"]) == (status, code)
    assert "{" not in body["title"]


def test_a_path_off_by_a_trailing_slash_names_the_one_that_exists(api):
    body = api.post("/api/v1/recall/search/", {"query": "x"}, format="json").json()
    assert body["code"] == "not_found"
    assert "/api/v1/recall/search?" in body["detail"]
    assert "/api/docs/" in api.get("/api/v1/memories/").json()["detail"]


def test_a_wrong_choice_lists_the_valid_ones(api):
    body = {"kind": "backtest", "external_ref": "bt-1", "content": {}}
    errors = api.post("/api/v1/evidence/", body, format="json").json()["errors"]
    assert "backtest_run" in errors["kind"][0] and "commit" in errors["kind"][0]


def test_a_malformed_hash_says_what_a_hash_looks_like(api, agent):
    from tests.factories import create_payload, make_evidence, user_preference

    payload = create_payload(user_preference(), [make_evidence(agent.agent)])
    payload["evidence"][0]["content_hash"] = "ABC"
    body = api.post("/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="h").json()
    assert "64 lowercase hex" in str(body["errors"])


def test_evidence_is_named_evidence_id_in_every_answer(api):
    created = api.post(
        "/api/v1/evidence/", {"kind": "commit", "external_ref": "c1", "content": {}}, format="json"
    )
    detail = api.get(f"/api/v1/evidence/{created.json()['evidence_id']}/").json()
    assert detail["evidence_id"] == created.json()["evidence_id"] and "id" not in detail


@contextlib.contextmanager
def _refusing_database():
    """Point the connection at nowhere (a closed port, or a directory that does not exist) for a moment."""
    saved = dict(connection.settings_dict)
    connection.close()
    if connection.vendor == "postgresql":
        connection.settings_dict["PORT"] = "1"
    else:
        connection.settings_dict["NAME"] = "/nonexistent-directory/custodian.sqlite3"
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.update(saved)


@pytest.mark.django_db(transaction=True)
def test_pages_and_api_answer_503_when_the_database_refuses_connections(client, agent):
    client.raise_request_exception = False
    client.force_login(make_person("pm-outage", agent.tenant))
    with _refusing_database():
        page = client.get("/review/")
        api = agent.client.get("/api/v1/proposals/")
    assert (page.status_code, page["Content-Type"]) == (503, "text/plain")
    assert (api.status_code, api.json()["code"]) == (503, "service_unavailable")
