"""Forged cursors answer 400: a plain page in the review UI, problem+json on the API; never a 500."""

import base64
import json

import pytest
from rest_framework.test import APIClient

from tenancy.services import issue_user_token
from tests.factories import create_payload, factor_fact, make_evidence, submit


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode()


def _json_cursor(values) -> str:
    return _b64(json.dumps(values).encode())


FORGED_UI = {
    "garbage": "!!!not~base64***",
    "base64-of-garbage": _b64(b"\xff\xfe\x00\x01garbage"),
    "json-not-a-list": _json_cursor({"after": 1}),
    "wrong-types": _json_cursor([{"a": 1}, []]),
    "numbers": _json_cursor([1, 2]),
    "year-9999": _json_cursor(["9999-12-31T23:59:59-01:00", "x"]),
    "offset-20h": _json_cursor(["2020-01-01T00:00:00-20:00", "y"]),
    "nul": _json_cursor(["2020-01-01T00:00:00+00:00", "\u0000"]),
    "huge-int-risk": _json_cursor(
        [10**30, "2020-01-01T00:00:00+00:00", "00000000-0000-0000-0000-000000000000"]
    ),
    "nan-risk": _b64(b'[NaN, "2020-01-01T00:00:00+00:00", "00000000-0000-0000-0000-000000000000"]'),
    "infinity-risk": _b64(b'[Infinity, "2020-01-01T00:00:00+00:00", "00000000-0000-0000-0000-000000000000"]'),
    "junk-string": _json_cursor("junk"),
}


@pytest.fixture
def queue_of_three(agent):
    return [
        submit(
            agent.agent,
            create_payload(
                factor_fact(content={"statement": f"fact {i}"}, dedupe_key=f"k{i}"),
                [make_evidence(agent.agent)],
            ),
        )
        for i in range(3)
    ]


@pytest.mark.parametrize("order", ["age", "-age", "risk"])
@pytest.mark.parametrize("cursor", list(FORGED_UI.values()), ids=list(FORGED_UI))
def test_a_forged_queue_cursor_is_a_bad_request(client, pm, factor_proposal, order, cursor):
    client.force_login(pm)
    response = client.get("/review/", {"order": order, "after": cursor})
    assert response.status_code == 400
    assert str(factor_proposal.pk) not in response.content.decode()


def _next_cursor(client, order: str) -> str:
    page = client.get("/review/", {"order": order}).context["page"]
    assert page.next_cursor
    return page.next_cursor


@pytest.fixture
def small_pages(monkeypatch):
    from reviews import views

    monkeypatch.setattr(views, "PAGE_SIZE", 1)


@pytest.mark.parametrize(("issued_for", "used_for"), [("age", "-age"), ("-age", "risk"), ("risk", "age")])
def test_a_cursor_of_another_list_is_a_bad_request(
    client, pm, queue_of_three, small_pages, issued_for, used_for
):
    client.force_login(pm)
    cursor = _next_cursor(client, issued_for)
    assert client.get("/review/", {"order": issued_for, "after": cursor}).status_code == 200
    assert client.get("/review/", {"order": used_for, "after": cursor}).status_code == 400


def test_a_tampered_cursor_is_a_bad_request(client, pm, queue_of_three, small_pages):
    client.force_login(pm)
    cursor = _next_cursor(client, "age")
    tampered = cursor[:-2] + ("A" if cursor[-2] != "A" else "B") + cursor[-1]
    assert client.get("/review/", {"order": "age", "after": tampered}).status_code == 400


FORGED_API = {
    "garbage": "!!!not~base64***",
    "base64-of-garbage": _b64(b"\xff\xfe\x00\x01garbage"),
    "position-word": _b64(b"p=yesterday"),
    "position-nul": _b64(b"p=2024-01-01T00:00:00%2B00:00%00"),
    "huge-offset": _b64(b"o=99999999999999999999999"),
    "reverse-not-a-bool": _b64(b"r=maybe"),
    "year-9999": _b64(b"p=9999-12-31T23:59:59-01:00"),
}


@pytest.fixture
def person_api(agent, pm) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_user_token(user=pm)[1]}")
    return client


@pytest.mark.parametrize(
    ("caller", "path"),
    [
        ("agent", "/api/v1/proposals/"),
        ("agent", "/api/v1/receipts/"),
        ("agent", "/api/v1/audit/events/"),
        ("person", "/api/v1/reviews/queue/"),
    ],
)
@pytest.mark.parametrize("cursor", list(FORGED_API.values()), ids=list(FORGED_API))
def test_a_forged_api_cursor_is_invalid_cursor(api, person_api, factor_proposal, caller, path, cursor):
    client = api if caller == "agent" else person_api
    response = client.get(path, {"cursor": cursor})
    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "invalid_cursor"
