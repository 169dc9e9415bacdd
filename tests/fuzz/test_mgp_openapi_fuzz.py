"""Property-based fuzzing of the MGP binding against MGP's own OpenAPI document (schemathesis, WSGI).

schemathesis loads ``/mgp/openapi.json`` (MGP's published document, bundled with its JSON
Schemas) from the Django WSGI handler and tests every operation in it with a valid agent
token: the coverage phase's boundary and schema-violating cases, then
``CUSTODIAN_FUZZ_EXAMPLES`` (default 15) generated cases, positive and negative. Generation is
derandomized; requests run inside the test's transaction (see ``conftest.py``).

Every response must pass:

- ``not_a_server_error``: never a 5xx (``server_traceback`` attaches what the server logged);
- ``mgp_envelope_errors``: every 4xx is MGP's error envelope with a string ``code`` and
  never ``retryable: true`` (bad input is the caller's to fix, not to retry);
- ``content_type_conformance``, ``unsupported_method``.

Left out: ``response_schema_conformance`` (Custodian answers a superset in places, e.g.
``redaction_info`` on raw items, which MGP's closed schemas refuse; MGP's own compliance suite
checks the shapes), and ``ignored_auth`` (discovery is public by design).
"""

import json
import logging
import os

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from config.wsgi import application

SCHEMA_URL = "/mgp/openapi.json"
EXAMPLES = int(os.environ.get("CUSTODIAN_FUZZ_EXAMPLES", "15"))


def _config() -> schemathesis.Config:
    return schemathesis.Config.from_dict(
        {
            "generation": {"with-security-parameters": False},
            "checks": {
                "enabled": False,
                "not_a_server_error": {"enabled": True},
                "content_type_conformance": {"enabled": True},
                "unsupported_method": {"enabled": True},
            },
            "output": {"sanitization": {"enabled": False}},
        }
    )


schema = schemathesis.openapi.from_wsgi(SCHEMA_URL, application, config=_config())

FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@pytest.fixture(autouse=True)
def _answer_without_waiting(settings):
    """No executor runs in process: a write answers with its task at once instead of waiting for it."""
    settings.CUSTODIAN_MGP_WAIT_SECONDS = 0


def mgp_envelope_errors(ctx, response, case):
    """Every refusal is MGP's error envelope, with a code, never marked retryable."""
    if response.status_code < 400 or response.status_code == 405:
        return None
    body = json.loads(response.content)
    assert body.get("status") == "error" and body.get("data") is None, body
    error = body.get("error") or {}
    assert isinstance(error.get("code"), str) and error["code"].startswith("MGP_"), body
    if response.status_code != 429:
        assert (error.get("details") or {}).get("retryable") is not True, body
    return None


def _server_traceback(caplog):
    def server_traceback(ctx, response, case):
        """A 5xx fails with what the server logged at ERROR, traceback included."""
        if response.status_code < 500:
            return None
        logged = [
            record.getMessage()
            + ("\n" + logging.Formatter().formatException(record.exc_info) if record.exc_info else "")
            for record in caplog.records
        ]
        raise AssertionError(f"{response.status_code}; the server logged:\n" + ("\n".join(logged) or "-"))

    return server_traceback


@schema.parametrize()
@FUZZ_SETTINGS
def test_mgp_with_an_agent_token(case, agent, caplog):
    caplog.set_level(logging.ERROR)
    caplog.clear()
    case.call_and_validate(
        headers={"Authorization": f"Bearer {agent.token}"},
        additional_checks=[mgp_envelope_errors, _server_traceback(caplog)],
    )
