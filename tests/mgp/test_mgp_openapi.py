"""MGP's OpenAPI document is served whole, offline, at a stable URL, and names every MGP route."""

import json

import pytest

from mgp.views import OPERATIONS

pytestmark = pytest.mark.django_db


def test_the_document_names_every_mgp_route_and_refers_only_inside_itself(anonymous):
    response = anonymous.get("/mgp/openapi.json")
    assert response.status_code == 200
    document = response.json()
    routes = {f"/mgp/{op}" for op in [*OPERATIONS, "initialize", "capabilities"]}
    assert routes <= set(document["paths"])
    refs = {part.split('"')[0] for part in json.dumps(document).split('"$ref": "')[1:]}
    assert refs and all(_resolves(document, ref) for ref in refs)
    assert document["paths"]["/mgp/get"]["post"]["security"] == [{"agentToken": []}]
    assert document["paths"]["/mgp/capabilities"]["get"]["security"] == []


def _resolves(document: dict, ref: str) -> bool:
    if not ref.startswith("#/"):
        return False
    node = document
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True
