"""``remember`` in TypeScript defaults to what the Python client and the MCP server use."""

import importlib
import json
import re

import pytest

from tests.client_typescript.node import node_env, run

# The shared defaults, as agreed for every ``remember``: evidence_text is the text itself,
# acting_for is ``about``, and evidence_ref is the prefix followed by a fresh UUID.
AGREED = {
    "type": "preference",
    "scope": "user",
    "evidence_kind": "conversation",
    "evidence_ref_prefix": "remember/",
    "consent_basis": "explicit",
    "risk_level": "low",
    "wait_seconds": 30,
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


@pytest.fixture
def typescript_defaults(package) -> dict:
    output = run(
        [
            "node",
            "--input-type=module",
            "--eval",
            'import { REMEMBER_DEFAULTS as d } from "./dist/index.js"; console.log(JSON.stringify(d));',
        ],
        env=node_env(),
    )
    return {_snake(key): value for key, value in json.loads(output).items()}


def test_typescript_defaults_are_the_agreed_ones(typescript_defaults):
    assert typescript_defaults == AGREED


def test_typescript_defaults_are_the_python_clients(typescript_defaults):
    try:
        python = importlib.import_module("custodian_client.remember").REMEMBER_DEFAULTS
    except (ImportError, AttributeError):
        pytest.skip("the Python client has no remember module in this checkout")
    assert typescript_defaults == dict(python)
