"""The OpenAPI schema and Swagger UI are served without auth and without third-party CDNs."""

import re

import pytest
import yaml
from django.core.management import call_command


def test_schema_is_public_and_lists_the_v1_endpoints(db, anonymous):
    response = anonymous.get("/api/schema/?format=json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["info"]["title"] == "Custodian API"
    for path in ("/api/v1/proposals/", "/api/v1/evidence/", "/api/v1/receipts/"):
        assert path in schema["paths"], path


def test_schema_declares_bearer_auth_for_the_api(db, anonymous):
    schema = anonymous.get("/api/schema/?format=json").json()
    assert schema["components"]["securitySchemes"]["AgentToken"]["scheme"] == "bearer"
    assert {"AgentToken": []} in schema["paths"]["/api/v1/proposals/"]["post"]["security"]


def test_schema_documents_both_operations_on_the_proposal_collection(db, anonymous):
    proposals = anonymous.get("/api/schema/?format=json").json()["paths"]["/api/v1/proposals/"]
    assert {"get", "post"} <= set(proposals)
    header_names = {p["name"] for p in proposals["post"]["parameters"] if p["in"] == "header"}
    assert "Idempotency-Key" in header_names


def test_docs_page_is_public_and_loads_swagger_from_this_server(db, anonymous):
    response = anonymous.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger" in html.lower()
    assert "cdn.jsdelivr" not in html
    assert "unpkg" not in html
    external = [
        url
        for url in re.findall(r"""(?:src|href)\s*=\s*["'](https?://[^"']+)""", html)
        if "testserver" not in url
    ]
    assert external == []


def test_schema_validates_without_warnings(db, tmp_path):
    target = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    schema = yaml.safe_load(target.read_text())
    assert "/api/v1/proposals/" in schema["paths"]


@pytest.mark.parametrize("url", ["/api/schema/", "/api/docs/"])
def test_schema_and_docs_ignore_a_garbage_bearer_token(db, anonymous, url):
    anonymous.credentials(HTTP_AUTHORIZATION="Bearer garbage")
    assert anonymous.get(url).status_code == 200


def test_each_submit_example_is_one_valid_action(db, anonymous):
    """Agents copy these: each must be exactly one action's body, valid as it stands."""
    from proposals.api import ProposalSubmitInput

    post = anonymous.get("/api/schema/?format=json").json()["paths"]["/api/v1/proposals/"]["post"]
    examples = post["requestBody"]["content"]["application/json"]["examples"]
    assert set(examples) >= {"Create", "Update", "Expire", "Revoke", "Delete", "Purge", "Restore"}
    for name, example in examples.items():
        body = example["value"]
        assert body["action"] == name.lower()
        serializer = ProposalSubmitInput(data=body)
        assert serializer.is_valid(), (name, serializer.errors)
