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


def _schema(anonymous) -> dict:
    return anonymous.get("/api/schema/?format=json").json()


def _served_api_routes() -> set[str]:
    """Every route an agent, an integrator or a probe calls, written as OpenAPI paths."""
    from django.urls import URLPattern, URLResolver, get_resolver

    def walk(patterns, prefix=""):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern):
                yield "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)

    served = set(walk(get_resolver().url_patterns))
    return {
        path for path in served if path.startswith(("/api/v1/", "/mgp/", "/livez", "/healthz", "/readyz"))
    }


def test_every_served_api_route_is_in_the_schema(db, anonymous):
    documented = set(_schema(anonymous)["paths"])
    served = _served_api_routes()
    assert len(served) > 40
    assert served - documented == set()


def test_every_operation_has_an_area_tag_and_a_plain_summary(db, anonymous):
    schema = _schema(anonymous)
    areas = [tag["name"] for tag in schema["tags"]]
    assert "v1" not in areas and {"Proposals", "Recall", "MGP", "Health"} <= set(areas)
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            assert len(operation["tags"]) == 1 and operation["tags"][0] in areas, where
            summary = operation.get("summary", "")
            assert summary and len(summary) <= 60 and not summary.endswith("."), where
            for text in (summary, operation.get("description", "")):
                assert "``" not in text and ":class:" not in text, where


def test_probes_and_mgp_discovery_need_no_credential_and_the_rest_does(db, anonymous):
    paths = _schema(anonymous)["paths"]
    for path in ("/livez", "/healthz", "/readyz", "/mgp/capabilities", "/mgp/openapi.json"):
        assert paths[path]["get"]["security"] == [], path
    assert paths["/mgp/write"]["post"]["security"] == [{"AgentToken": []}]
    assert paths["/mgp/write"]["post"]["externalDocs"]["url"] == "/mgp/openapi.json"


def _json_schema(node):
    """An OpenAPI 3.0 schema object as JSON Schema: ``nullable`` becomes a null alternative."""
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: _json_schema(value) for key, value in node.items() if key != "nullable"}
    if node.get("nullable"):
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


def test_every_example_in_the_schema_is_valid_against_its_own_schema(db, anonymous):
    import jsonschema

    schema = _schema(anonymous)
    components = _json_schema(schema["components"])
    checked = 0
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            bodies = [operation.get("requestBody", {}), *operation["responses"].values()]
            for body in bodies:
                for media in body.get("content", {}).values():
                    for name, example in media.get("examples", {}).items():
                        validator = jsonschema.Draft7Validator(
                            {**_json_schema(media["schema"]), "components": components}
                        )
                        errors = [error.message for error in validator.iter_errors(example["value"])]
                        assert errors == [], (method, path, name, errors[:3])
                        checked += 1
    assert checked >= 9  # the submit examples, the batch's and the observation's
