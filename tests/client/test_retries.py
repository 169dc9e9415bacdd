"""Retry and backoff decisions of custodian-client, on an httpx MockTransport (no server, no sleeping).

The live 429 and 503 are in test_client_live.py; these pin the arithmetic and the bounds.
"""

import asyncio

import httpx
import pytest
from custodian_client import AsyncCustodian, Custodian, RetryPolicy
from custodian_client import errors as e

PROBLEM = {"Content-Type": "application/problem+json"}


def _problem(status: int, code: str, **headers: str) -> httpx.Response:
    body = {"type": f"urn:custodian:problem:{code}", "title": code, "status": status, "code": code}
    return httpx.Response(status, json=body, headers={**PROBLEM, **headers})


def _scripted(*answers: httpx.Response | Exception):
    """A transport answering in order; it records every request it saw."""
    seen: list[httpx.Request] = []
    queue = list(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return seen, handle


def _client(handle, sleeps: list[float], **policy) -> Custodian:
    return Custodian(
        "http://custodian.test",
        "cst_test",
        transport=httpx.MockTransport(handle),
        sleep=sleeps.append,
        retry=RetryPolicy(**policy),
    )


def _ok() -> httpx.Response:
    return httpx.Response(
        200, json={"recall_id": "r1", "results": [], "next_cursor": None, "weights_version": "v"}
    )


def test_a_429_waits_exactly_what_retry_after_says_then_succeeds():
    seen, handle = _scripted(_problem(429, "throttled", **{"Retry-After": "3"}), _ok())
    sleeps: list[float] = []
    assert _client(handle, sleeps).recall("x")["recall_id"] == "r1"
    assert sleeps == [3.0] and len(seen) == 2


def test_a_503_without_retry_after_backs_off_exponentially_and_gives_up_typed():
    seen, handle = _scripted(*[_problem(503, "service_unavailable")] * 4)
    sleeps: list[float] = []
    with pytest.raises(e.ServiceUnavailable) as raised:
        _client(handle, sleeps, max_retries=3, backoff=0.5).recall("x")
    assert sleeps == [0.5, 1.0, 2.0] and len(seen) == 4
    assert raised.value.status == 503 and raised.value.code == "service_unavailable"


def test_a_retry_after_longer_than_the_bound_is_not_slept():
    _, handle = _scripted(_problem(429, "throttled", **{"Retry-After": "3600"}))
    sleeps: list[float] = []
    with pytest.raises(e.Throttled) as raised:
        _client(handle, sleeps, max_delay=30).recall("x")
    assert sleeps == [] and raised.value.retry_after == 3600


def test_retry_after_as_an_http_date_is_understood():
    _, handle = _scripted(
        _problem(503, "service_unavailable", **{"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}), _ok()
    )
    sleeps: list[float] = []
    _client(handle, sleeps).recall("x")
    assert sleeps == [0.0]  # a date in the past: retry at once


def test_every_retry_of_a_proposal_reuses_its_idempotency_key_and_each_call_gets_a_new_one():
    created = httpx.Response(201, json={"id": "p1", "status": "released"})
    seen, handle = _scripted(
        _problem(503, "service_unavailable"), httpx.ConnectError("reset"), created, created
    )
    custodian = _client(handle, [])
    custodian.propose("expire", memory_id="m", base_revision=1, reason="r")
    custodian.propose("expire", memory_id="m", base_revision=1, reason="r")
    keys = [request.headers["Idempotency-Key"] for request in seen]
    assert keys[0] == keys[1] == keys[2] != keys[3]


def test_a_lost_connection_is_not_retried_for_a_write_that_is_not_idempotent():
    seen, handle = _scripted(httpx.ConnectError("reset"))
    with pytest.raises(e.ServiceUnavailable) as raised:
        _client(handle, []).register_evidence("document", "doc-1", {"text": "x"})
    assert len(seen) == 1 and raised.value.code == "connection_failed"


def test_other_errors_are_never_retried():
    seen, handle = _scripted(_problem(409, "base_revision_stale"))
    with pytest.raises(e.BaseRevisionStale):
        _client(handle, []).expire("m", "r", base_revision=1)
    assert len(seen) == 1


def test_errors_are_typed_by_code_and_an_unknown_code_is_still_typed():
    assert type(e.error_for(422, {"code": "evidence_invalid", "proposal_id": "p"})) is e.EvidenceInvalid
    denial = e.error_for(422, {"code": "some_new_deny_reason", "proposal_id": "p", "reason_codes": ["x"]})
    assert isinstance(denial, e.ProposalDenied) and denial.proposal_id == "p" and denial.reason_codes == ["x"]
    unknown = e.error_for(403, {"code": "brand_new_refusal", "detail": "no"})
    assert isinstance(unknown, e.PermissionDenied) and unknown.code == "brand_new_refusal"
    assert isinstance(e.error_for(418, {}), e.BadRequest)
    assert all(issubclass(cls, e.CustodianError) for cls in e.CODE_CLASSES.values())
    assert all(cls.code == code for code, cls in e.CODE_CLASSES.items())


def test_the_async_client_retries_the_same_way():
    seen, handle = _scripted(_problem(429, "throttled", **{"Retry-After": "2"}), _ok())
    sleeps: list[float] = []

    async def record(delay: float) -> None:
        sleeps.append(delay)

    async def run() -> str:
        async with AsyncCustodian(
            "http://custodian.test", "cst_test", transport=httpx.MockTransport(handle), sleep=record
        ) as custodian:
            return (await custodian.recall("x"))["recall_id"]

    assert asyncio.run(run()) == "r1"
    assert sleeps == [2.0] and len(seen) == 2


def test_a_next_link_naming_another_host_is_followed_on_the_clients_own_base_url():
    first = httpx.Response(
        200,
        json={"next": "http://evil.example/custodian/api/v1/audit/events/?cursor=abc", "results": [{"n": 1}]},
    )
    last = httpx.Response(200, json={"next": None, "results": [{"n": 2}]})
    seen, handle = _scripted(first, last)
    custodian = Custodian(
        "https://custodian.test/custodian", "cst_test", transport=httpx.MockTransport(handle), sleep=[].append
    )
    assert [event["n"] for event in custodian.audit_events()] == [1, 2]
    assert [str(request.url) for request in seen] == [
        "https://custodian.test/custodian/api/v1/audit/events/",
        "https://custodian.test/custodian/api/v1/audit/events/?cursor=abc",
    ]
