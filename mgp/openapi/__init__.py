"""MGP's own OpenAPI document (v0.1.1, MIT, ``mgp-openapi.yaml``), bundled with its JSON Schemas.

The published document points at the schema files beside it
(``../schemas/*.json``), which a client fetching one URL cannot follow. The
bundle inlines each file once under ``components.schemas`` and rewrites every
reference to point inside the document, so a fuzzer or client reads it whole
from ``/mgp/openapi.json``. Two facts of this deployment are added: there is
no fixed server (the document is served by the server it describes) and every
operation but discovery takes an agent's bearer token.
"""

import copy
import functools
import json
import re
from pathlib import Path
from typing import Any

import yaml

from mgp.validation import SCHEMA_DIR

DOCUMENT = Path(__file__).resolve().parent / "mgp-openapi.yaml"
SUFFIX = ".schema.json"
PUBLIC = {"/mgp/capabilities"}


def _component(file_name: str) -> str:
    return "#/components/schemas/" + file_name.removesuffix(SUFFIX)


def _rewrite(node: Any, here: str) -> Any:
    """Point every ``$ref`` of the file ``here`` at its bundled component."""
    if isinstance(node, list):
        return [_rewrite(item, here) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _rewrite(value, here) for key, value in node.items() if key not in ("$id", "$schema")}
    ref = node.get("$ref")
    if isinstance(ref, str) and not ref.startswith("#/components/"):
        target, _, fragment = ref.partition("#")
        target = target.removeprefix("../schemas/") or here
        out["$ref"] = _component(target) + fragment
    return out


@functools.cache
def _bundle() -> str:
    document = yaml.safe_load(DOCUMENT.read_text())
    document.pop("servers", None)
    schemas = {
        path.name.removesuffix(SUFFIX): _rewrite(json.loads(path.read_text()), path.name)
        for path in sorted(SCHEMA_DIR.glob(f"*{SUFFIX}"))
    }
    document = _rewrite(document, "")
    document["components"]["schemas"].update(schemas)
    document["components"]["securitySchemes"] = {
        "agentToken": {"type": "http", "scheme": "bearer", "description": "A Custodian agent token"}
    }
    for path, operations in document["paths"].items():
        for operation in operations.values():
            operation["security"] = [] if path in PUBLIC else [{"agentToken": []}]
    return json.dumps(document, sort_keys=True)


def openapi_document() -> dict[str, Any]:
    """The bundled document (a fresh copy: callers may change it)."""
    return copy.deepcopy(json.loads(_bundle()))


def _readable(summary: str) -> str:
    """``WriteMemory`` -> ``Write memory``; a summary already in words stays as it is."""
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", summary).split()
    return " ".join([words[0], *(word.lower() for word in words[1:])]) if words else summary


def _custodian_operation(path: str, operation: dict[str, Any]) -> dict[str, Any]:
    """One MGP operation as Custodian's own document lists it: the route, its bodies by reference."""
    listed: dict[str, Any] = {
        "operationId": f"mgp_{operation['operationId']}",
        "summary": f"{_readable(operation['summary'])} (MGP)",
        "description": (
            f"MGP's `{operation['operationId']}` over Custodian's pipeline: a write is a zero-write proposal "
            "judged by the same policy, a read goes through the same read policy. Request and response "
            "bodies, in MGP's envelope, are in MGP's own OpenAPI 3.1 document at `/mgp/openapi.json`."
        ),
        "externalDocs": {"description": "MGP's OpenAPI document", "url": "/mgp/openapi.json"},
        "security": [] if path in PUBLIC else [{"AgentToken": []}],
        "responses": {
            "200": {"description": "MGP's envelope", "content": {"application/json": {"schema": ENVELOPE}}}
        },
    }
    if "requestBody" in operation:
        listed["requestBody"] = {"required": True, "content": {"application/json": {"schema": ENVELOPE}}}
    return listed


ENVELOPE = {"type": "object", "additionalProperties": True, "description": "See `/mgp/openapi.json`"}


def add_mgp_routes(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular hook: list every MGP route in Custodian's document (MGP's views opt out of it)."""
    paths = result.setdefault("paths", {})
    for path, operations in json.loads(_bundle())["paths"].items():
        paths[path] = {method: _custodian_operation(path, op) for method, op in operations.items()}
    paths["/mgp/openapi.json"] = {
        "get": {
            "operationId": "mgp_openapi",
            "summary": "MGP's OpenAPI document",
            "description": "MGP's own OpenAPI 3.1 document, with its JSON Schemas bundled in.",
            "security": [],
            "responses": {
                "200": {"description": "OpenAPI 3.1", "content": {"application/json": {"schema": ENVELOPE}}}
            },
        }
    }
    return result
