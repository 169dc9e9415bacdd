"""Property-based fuzzing of the API against its own OpenAPI schema (schemathesis, in-process WSGI).

schemathesis loads ``/api/schema/?format=json`` from the Django WSGI handler and tests every
operation in it twice:

- with a valid agent token: the coverage phase's boundary and schema-violating cases, then
  ``CUSTODIAN_FUZZ_EXAMPLES`` (default 15) generated cases, positive and negative;
- with a valid agent token and a hostile body: every generated POST body with one member (or
  the body) replaced by raw JSON text json.dumps never writes (10,000-deep nesting, NUL, a lone
  surrogate, 10**400, 2**63, 1e16, bare 1e400 / NaN / Infinity, a 300 kB string); it must be
  refused with a 4xx problem;
- without credentials: the generated cases only (the server refuses before it reads a body or a
  query, so the coverage phase's ~2,300 body and query variants would all be the same 401).

Generation is derandomized, so a run is reproducible. Requests run inside the test's
transaction (pytest-django ``db``; see ``conftest.py``). Valid path ids are pointed at objects
that exist in the agent's tenant (always in coverage cases, as one choice among others in
generated ones), so detail endpoints are tested past their 404, and a valid header set gets an
Idempotency-Key the server accepts (the schema allows ""), so submissions get past the header.

Every response must pass:

- ``not_a_server_error``: never a 5xx (``server_traceback`` attaches what the server logged);
- ``problem_json_errors``: every 4xx/5xx is ``application/problem+json`` with a string ``code``;
- ``response_schema_conformance``, ``content_type_conformance``, ``response_headers_conformance``
  where the schema documents the response (it documents success responses only);
- ``ignored_auth``: a 2xx with the agent token becomes a refusal without a token or with a wrong one;
- ``missing_required_header``, ``unsupported_method``, ``allow_header_conformance``;
- with an agent token, the reviewer-only endpoints answer 403;
- without credentials, every URL that names a view answers 401.

``test_a_forged_cursor_position_is_never_a_server_error`` at the end pins a bug found next to
the fuzzer (500 on SQLite, 503 on PostgreSQL); it fails until the pagination is fixed.

Left out, because the schema does not describe the API closely enough for them yet:
``status_code_conformance`` (no error status is documented), ``negative_data_rejection`` and
``positive_data_acceptance`` (the server is stricter than the schema in places, more lenient in
others).
"""

import base64
import hashlib
import json
import logging
import os
import uuid
from urllib.parse import unquote, urlsplit

import pytest
import schemathesis
from django.urls import Resolver404, resolve
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.meta import TestPhase

from config.wsgi import application
from executor.models import Receipt
from tests.factories import create_payload, factor_fact, make_evidence, make_person, submit

SCHEMA_URL = "/api/schema/?format=json"
EXAMPLES = int(os.environ.get("CUSTODIAN_FUZZ_EXAMPLES", "15"))
PROBLEM = "application/problem+json"
REVIEWER_ONLY = {"/api/v1/reviews/queue/", "/api/v1/proposals/{proposal_id}/decisions/"}


def _config(*, coverage: bool) -> schemathesis.Config:
    return schemathesis.Config.from_dict(
        {
            # Each test sets its own credentials; generated ones would blur the two runs.
            "generation": {"with-security-parameters": False},
            "phases": {"coverage": {"enabled": coverage}},
            "checks": {
                "enabled": False,
                "not_a_server_error": {"enabled": True},
                "response_schema_conformance": {"enabled": True},
                "content_type_conformance": {"enabled": True},
                "response_headers_conformance": {"enabled": True},
                "ignored_auth": {"enabled": True},
                "missing_required_header": {"enabled": True},
                "unsupported_method": {"enabled": True},
                "allow_header_conformance": {"enabled": True},
            },
            # Throwaway test tokens and keys: show each request exactly as sent, so failures reproduce.
            "output": {"sanitization": {"enabled": False}},
        }
    )


# Custodian's own API: MGP's routes answer in MGP's envelope and are fuzzed against MGP's own
# document (test_mgp_openapi_fuzz.py); the probes take no input and need no credential.
OWN_API = r"^/api/v1/"
agent_schema = schemathesis.openapi.from_wsgi(SCHEMA_URL, application, config=_config(coverage=True)).include(
    path_regex=OWN_API
)
anonymous_schema = schemathesis.openapi.from_wsgi(
    SCHEMA_URL, application, config=_config(coverage=False)
).include(path_regex=OWN_API)

FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    # One tenant, agent and transaction per operation and run; the examples share them on purpose.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

# --- Existing objects ---------------------------------------------------------------------------

# Ids of objects in the agent's tenant, by path parameter name (filled by the ``known_ids`` fixture).
KNOWN_IDS: dict[str, list] = {}


def _is_valid(name: str, value) -> bool:
    if name == "revision":
        return isinstance(value, int) and not isinstance(value, bool)
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


def flatmap_path_parameters(context, path_parameters):
    """Generated cases: a valid id may also be one of an existing object."""
    choices = {
        name: [value, *KNOWN_IDS[name]] if name in KNOWN_IDS and _is_valid(name, value) else [value]
        for name, value in (path_parameters or {}).items()
    }
    if all(len(values) == 1 for values in choices.values()):
        return st.just(path_parameters)
    return st.fixed_dictionaries({name: st.sampled_from(values) for name, values in choices.items()})


agent_schema.hook(flatmap_path_parameters)
anonymous_schema.hook(flatmap_path_parameters)

# --- Hostile bodies -----------------------------------------------------------------------------

# Raw JSON text spliced in where a generated value was: bare tokens json.dumps would never write.
HOSTILE_LITERALS = {
    "deep nesting": "[" * 10_000 + "]" * 10_000,
    "NUL": '"a\\u0000b"',
    "lone surrogate": '"\\ud800"',
    "10**400": "1" + "0" * 400,
    "2**63": str(2**63),
    "1e16": "1e16",
    "1e400": "1e400",
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "over-long string": '"' + "x" * 300_000 + '"',
}
_SPLICE = "__custodian_hostile__"


def _spliced(body, key: str, literal: str) -> bytes:
    """The generated body as JSON text with ``literal`` in place of one member (or the whole body)."""
    if isinstance(body, dict) and body:
        body = {**body, key if key in body else next(iter(body)): _SPLICE}
    elif isinstance(body, list) and body:
        body = [_SPLICE, *body[1:]]
    else:
        body = {"hostile": _SPLICE}
    return json.dumps(body).replace(f'"{_SPLICE}"', literal, 1).encode()


def flatmap_body(context, body):
    """Every generated body carries one hostile value, at one of its members."""
    keys = list(body) if isinstance(body, dict) and body else ["hostile"]
    return st.builds(
        _spliced, st.just(body), st.sampled_from(keys), st.sampled_from(list(HOSTILE_LITERALS.values()))
    )


hostile_schema = schemathesis.openapi.from_wsgi(SCHEMA_URL, application, config=_config(coverage=False))
hostile_schema.hook(flatmap_path_parameters)
hostile_schema.hook(flatmap_body)


def _aim_at_existing_objects(case) -> None:
    """Coverage cases are built before any object exists: point their valid path ids at one now."""
    if case.meta.phase.name != TestPhase.COVERAGE or case.meta.is_negative_at(ParameterLocation.PATH):
        return
    for name, value in (case.path_parameters or {}).items():
        if name in KNOWN_IDS and _is_valid(name, value):
            case.path_parameters[name] = KNOWN_IDS[name][-1]


def _acceptable_idempotency_key(case) -> None:
    """Give a valid header set an Idempotency-Key the server accepts.

    The schema declares the header as any string (the coverage phase sends ""), the server wants
    1-200 printable characters: without this nearly every submission would stop at the header.
    Cases that are about the header itself keep what was generated.
    """
    key = (case.headers or {}).get("Idempotency-Key")
    if key is None or case.meta.is_negative_at(ParameterLocation.HEADER):
        return
    if getattr(case.meta.phase.data, "parameter", None) == "Idempotency-Key":
        return
    if not (0 < len(key) <= 200 and key.isprintable()):
        body = json.dumps(case.body, sort_keys=True, default=str)
        case.headers["Idempotency-Key"] = "fuzz-" + hashlib.sha256(body.encode()).hexdigest()[:24]


@pytest.fixture
def known_ids(agent, applied_memory_factory):
    """An applied memory with its receipt, an open proposal and one sent back for changes."""
    from reviews.services import record_decision

    memory = applied_memory_factory(agent)
    evidence = make_evidence(agent.agent)
    pending = submit(agent.agent, create_payload(factor_fact(), [evidence]))
    returned = submit(agent.agent, create_payload(factor_fact(dedupe_key="fuzz:returned"), [evidence]))
    record_decision(
        actor=make_person("fuzz-reviewer", agent.tenant),
        proposal_id=returned.pk,
        decision="request_changes",
        reason="needs a source",
        represented_owner="",
        action_digest=returned.action_digest,
        channel="api",
    )
    KNOWN_IDS.update(
        evidence_id=[str(evidence.source_id)],
        revision=[evidence.revision],
        proposal_id=[str(pending.pk), str(returned.pk)],
        memory_id=[str(memory.pk)],
        receipt_id=[str(receipt.pk) for receipt in Receipt.objects.filter(tenant=agent.tenant)],
    )
    yield KNOWN_IDS
    KNOWN_IDS.clear()


# --- Checks -------------------------------------------------------------------------------------


def problem_json_errors(ctx, response, case):
    """Every 4xx/5xx is application/problem+json whose JSON body has a string ``code``."""
    if response.status_code < 400:
        return None
    content_type = (response.headers.get("content-type") or [""])[0]
    assert content_type.split(";")[0].strip().lower() == PROBLEM, (
        f"{response.status_code} answered with Content-Type {content_type!r}, not {PROBLEM}"
    )
    try:
        body = json.loads(response.content)
    except ValueError as exc:
        raise AssertionError(f"{response.status_code} problem body is not JSON: {exc}") from None
    assert isinstance(body, dict), f"problem body is not a JSON object: {body!r}"
    assert isinstance(body.get("code"), str) and body["code"], f"problem body has no string code: {body!r}"
    assert body.get("status", response.status_code) == response.status_code, (
        f"problem body says status {body['status']!r}, the response is {response.status_code}"
    )
    return None


def _names_a_view(response) -> bool:
    """Whether the URL sent resolves (if not, the URL resolver's 404 is the right answer)."""
    try:
        resolve(unquote(urlsplit(response.request.url).path))
    except Resolver404:
        return False
    return True


def reviewer_endpoints_refuse_agents(ctx, response, case):
    """Reviewer-only endpoints answer an agent token with 403."""
    if case.operation.path in REVIEWER_ONLY and _names_a_view(response):
        assert response.status_code == 403, f"reviewer-only endpoint answered an agent {response.status_code}"
    return None


def refused_without_credentials(ctx, response, case):
    """Without credentials nothing answers 2xx, and every URL that names a view answers 401."""
    assert not 200 <= response.status_code < 300, f"answered {response.status_code} without credentials"
    if _names_a_view(response):
        assert response.status_code == 401, f"answered {response.status_code} without credentials, not 401"
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


def _call_and_validate(case, caplog, headers: dict, check) -> None:
    caplog.set_level(logging.ERROR)
    caplog.clear()
    _aim_at_existing_objects(case)
    _acceptable_idempotency_key(case)
    case.call_and_validate(
        headers=headers,
        additional_checks=[problem_json_errors, check, _server_traceback(caplog)],
    )


# --- Tests --------------------------------------------------------------------------------------


@agent_schema.parametrize()
@FUZZ_SETTINGS
def test_with_an_agent_token(case, agent, known_ids, caplog):
    headers = {"Authorization": f"Bearer {agent.token}"}
    _call_and_validate(case, caplog, headers, reviewer_endpoints_refuse_agents)


@anonymous_schema.parametrize()
@FUZZ_SETTINGS
def test_without_credentials(case, known_ids, caplog):
    _call_and_validate(case, caplog, {}, refused_without_credentials)


def refused_as_a_client_error(ctx, response, case):
    """A hostile body is never accepted: 4xx (the parser's refusal, or one that came before reading it).

    Only spliced bodies (bytes) are hostile; the schema's own examples are sent as they are.
    """
    if isinstance(case.body, bytes):
        assert 400 <= response.status_code < 500, f"a hostile body answered {response.status_code}"
    return None


@hostile_schema.include(method="POST", path_regex=OWN_API).parametrize()
@FUZZ_SETTINGS
def test_with_hostile_bodies(case, agent, known_ids, caplog):
    headers = {"Authorization": f"Bearer {agent.token}", "Content-Type": "application/json"}
    _call_and_validate(case, caplog, headers, refused_as_a_client_error)


# --- Found while fuzzing -------------------------------------------------------------------------

# Found by hand next to the fuzzer, which cannot forge a cursor: a DRF cursor is base64 of a query
# string whose ``p`` is the keyset position, parsed as a datetime and sent to the database as-is.
# These positions parse, but the database cannot take them. Fails until the pagination refuses
# them as ``invalid_cursor`` (or serves a page); it is never a 5xx.
FORGED_POSITIONS = {
    # SQLite: OverflowError converting to UTC in adapt_datetimefield_value -> 500 server_error
    "year-9999-minus-1h": "p=9999-12-31T23:59:59-01:00",
    # PostgreSQL: DataError "time zone displacement out of range" -> 503 service_unavailable
    "utc-offset-minus-20h": "p=2020-01-01T00:00:00-20:00",
}


@pytest.mark.parametrize("position", FORGED_POSITIONS.values(), ids=FORGED_POSITIONS.keys())
@pytest.mark.parametrize(
    "url", ["/api/v1/proposals/", "/api/v1/receipts/", "/api/v1/audit/events/", "/api/v1/reviews/queue/"]
)
def test_a_forged_cursor_position_is_never_a_server_error(agent, url, position):
    client = agent.client
    if url == "/api/v1/reviews/queue/":
        client = APIClient()
        client.force_login(make_person("fuzz-queue-reviewer", agent.tenant))
    cursor = base64.b64encode(position.encode()).decode()
    response = client.get(url, {"cursor": cursor})
    assert response.status_code in (200, 400), response.content
    if response.status_code == 400:
        assert response["Content-Type"] == PROBLEM
        assert response.json()["code"] == "invalid_cursor"
