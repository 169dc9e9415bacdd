"""Unauthenticated traffic: throttled on the caller's real address before it is refused, audited in bounds.

Rates are per day so no assertion depends on how long the test takes; a flood's audit rows are
bounded by a constant (at most two aggregation windows, should the run straddle a boundary).
"""

import pytest
from django.contrib.auth.models import User
from django.db.models import Sum
from rest_framework.test import APIClient

from tenancy.models import DeniedRequest

FLOOD = 500
ATTACKER = "203.0.113.7"
PROXY = "10.0.0.2"
PROBLEM = "application/problem+json"


@pytest.fixture(autouse=True)
def _low_rate(settings):
    settings.CUSTODIAN_API_RATE = "5/day"


def _audited() -> tuple[int, int]:
    """Return how many audit rows exist and how many refusals they count."""
    return DeniedRequest.objects.count(), DeniedRequest.objects.aggregate(n=Sum("count"))["n"] or 0


def _assert_throttled(response) -> None:
    assert response.status_code == 429, response.content[:200]
    assert int(response["Retry-After"]) >= 1


def test_an_unauthenticated_flood_is_throttled_and_audited_in_bounded_rows(db):
    client = APIClient(REMOTE_ADDR=ATTACKER)
    statuses = [client.get("/api/v1/proposals/").status_code for _ in range(FLOOD)]
    assert statuses == [401] * 5 + [429] * (FLOOD - 5)
    last = client.get("/api/v1/proposals/")
    _assert_throttled(last)
    assert last["Content-Type"] == PROBLEM and last.json()["code"] == "throttled"
    rows, refusals = _audited()
    assert rows <= 4 and refusals == FLOOD + 1


def test_a_bad_token_flood_counts_against_the_address_not_a_token(db, agent):
    bad = APIClient(REMOTE_ADDR=ATTACKER)
    statuses = []
    for n in range(FLOOD):
        bad.credentials(HTTP_AUTHORIZATION=f"Bearer cst_forged{n}")
        statuses.append(bad.get("/api/v1/proposals/").status_code)
    assert statuses == [401] * 5 + [429] * (FLOOD - 5)
    rows, refusals = _audited()
    assert rows <= 4 and refusals == FLOOD
    assert set(DeniedRequest.objects.values_list("caller", flat=True)) == {f"addr:{ATTACKER}"}
    # A valid token from the same address has its own bucket.
    legit = APIClient(REMOTE_ADDR=ATTACKER)
    legit.credentials(HTTP_AUTHORIZATION=f"Bearer {agent.token}")
    assert legit.get("/api/v1/proposals/").status_code == 200


def test_a_token_refused_by_permission_is_throttled_on_its_token(agent):
    statuses = [agent.client.get("/api/v1/reviews/queue/").status_code for _ in range(7)]
    assert statuses == [403] * 5 + [429] * 2
    assert DeniedRequest.objects.filter(caller=f"agent:{agent.agent.pk}").count() <= 4


@pytest.mark.parametrize("prefix", ["/api/v1/no-such-thing/", "/no-such-page/"])
def test_probing_unknown_urls_is_throttled_and_bounded(db, prefix):
    client = APIClient(REMOTE_ADDR=ATTACKER)
    statuses = [client.get(f"{prefix}{n}/").status_code for n in range(FLOOD)]
    assert statuses == [404] * 5 + [429] * (FLOOD - 5)
    _assert_throttled(client.get(f"{prefix}last/"))
    rows, refusals = _audited()
    assert rows <= 4 and refusals == FLOOD + 1


def test_a_spoofed_forwarded_for_from_an_untrusted_peer_gets_no_fresh_bucket(db):
    client = APIClient(REMOTE_ADDR=ATTACKER)
    statuses = [
        client.get("/api/v1/proposals/", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}").status_code for n in range(7)
    ]
    assert statuses == [401] * 5 + [429] * 2
    assert set(DeniedRequest.objects.values_list("remote_addr", flat=True)) == {ATTACKER}


def test_a_trusted_proxy_forwards_the_real_client_address(db, settings):
    settings.CUSTODIAN_TRUSTED_PROXIES = ["10.0.0.0/8"]
    proxy = APIClient(REMOTE_ADDR=PROXY)
    # The client may prepend anything; the proxy appends the peer it saw (then its own hops).
    statuses = [
        proxy.get("/api/v1/proposals/", HTTP_X_FORWARDED_FOR=f"6.6.6.{n}, {ATTACKER}, 10.0.0.9").status_code
        for n in range(7)
    ]
    assert statuses == [401] * 5 + [429] * 2
    other = proxy.get("/api/v1/proposals/", HTTP_X_FORWARDED_FOR="198.51.100.20")
    assert other.status_code == 401
    assert set(DeniedRequest.objects.values_list("remote_addr", flat=True)) == {ATTACKER, "198.51.100.20"}


def test_ipv6_clients_are_keyed_on_their_64_bit_prefix(db):
    statuses = [
        APIClient(REMOTE_ADDR=f"2001:db8:1:2::{n:x}").get("/api/v1/proposals/").status_code for n in range(7)
    ]
    assert statuses == [401] * 5 + [429] * 2
    assert APIClient(REMOTE_ADDR="2001:db8:1:3::1").get("/api/v1/proposals/").status_code == 401


def test_refusals_from_many_addresses_stay_within_a_fixed_number_of_rows(db, settings):
    settings.CUSTODIAN_DENIED_ANONYMOUS_ROWS = 10
    for n in range(FLOOD):
        address = f"198.18.{n // 250}.{n % 250 + 1}"
        assert APIClient(REMOTE_ADDR=address).get("/api/v1/proposals/").status_code == 401
    rows, refusals = _audited()
    assert rows <= 2 * 11 and refusals == FLOOD
    assert DeniedRequest.objects.filter(caller="addr:*").aggregate(n=Sum("count"))["n"] >= FLOOD - 20


def test_each_refusal_row_counts_repeats_in_place(agent, other_agent, applied_memory):
    for _ in range(3):
        assert other_agent.client.get(f"/api/v1/memories/{applied_memory.id}/").status_code == 404
    row = DeniedRequest.objects.get()
    assert (row.count, row.status, row.code, row.agent, row.tenant) == (
        3,
        404,
        "not_found",
        other_agent.agent,
        other_agent.tenant,
    )
    assert row.path == f"/api/v1/memories/{applied_memory.id}/" and row.last_seen_at >= row.created_at


def test_a_login_flood_from_one_address_is_throttled(db):
    client = APIClient(REMOTE_ADDR=ATTACKER)
    statuses = [
        client.post("/accounts/login/", {"username": f"user{n}", "password": "guess"}).status_code
        for n in range(7)
    ]
    assert statuses == [200] * 5 + [429] * 2
    _assert_throttled(client.post("/accounts/login/", {"username": "x", "password": "y"}))


def test_a_locked_login_answers_retry_after_and_is_audited(client, db, settings):
    settings.CUSTODIAN_API_RATE = "100/day"
    settings.CUSTODIAN_LOGIN_ATTEMPTS = 2
    User.objects.create_user("erin", password="right-password")
    for _ in range(2):
        client.post("/accounts/login/", {"username": "erin", "password": "wrong"})
    locked = client.post("/accounts/login/", {"username": "erin", "password": "right-password"})
    _assert_throttled(locked)
    assert DeniedRequest.objects.filter(status=429, path="/accounts/login/").exists()


def test_a_signed_in_reviewer_is_throttled_on_the_review_ui(client, db):
    client.force_login(User.objects.create_user("frank"))
    statuses = [client.get("/review/").status_code for _ in range(7)]
    assert statuses == [200] * 5 + [429] * 2
    _assert_throttled(client.get("/review/dashboard/"))


def test_a_malformed_trusted_proxy_list_fails_the_system_check(settings):
    from tenancy.checks import check_trusted_proxies

    settings.CUSTODIAN_TRUSTED_PROXIES = ["10.0.0.0/8", "proxy.internal"]
    assert [error.id for error in check_trusted_proxies(None)] == ["tenancy.E001"]
