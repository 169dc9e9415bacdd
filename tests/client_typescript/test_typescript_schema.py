"""The TypeScript client's request and response types are the ones the server's OpenAPI schema says."""

import subprocess
import sys

import pytest

from tests.client_typescript.node import BASE_DIR, node_env, run

REGENERATE = "make typescript-schema"
# The schema is generated under the embedded settings, whatever the test run uses.
pytestmark = pytest.mark.mode_independent


def test_committed_schema_types_match_the_openapi_schema(package, tmp_path):
    schema = tmp_path / "openapi.yaml"
    generated = tmp_path / "schema.ts"
    # Generated under the embedded (SQLite) settings, as the Makefile does: PostgreSQL's narrower
    # integer columns would change the schema's maxima and so the generated comments.
    env = {key: value for key, value in node_env().items() if key != "CUSTODIAN_REQUIRE_SERVICES"}
    subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--validate", "--fail-on-warn", "--file", str(schema)],
        cwd=BASE_DIR,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    run(["npx", "--no-install", "openapi-typescript", str(schema), "--output", str(generated)])
    committed = (package / "src" / "schema.ts").read_text()
    assert generated.read_text() == committed, (
        f"clients/typescript/src/schema.ts is out of date with the OpenAPI schema: run `{REGENERATE}`"
    )
