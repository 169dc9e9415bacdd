"""Where /review/ takes each role, and the top bar's links to the receipts and the chain."""

import pytest
from django.contrib.auth.models import Permission
from guardian.shortcuts import assign_perm

from reviews.roles import landing
from reviews.selectors import AUDIT, DECIDE
from tests.factories import make_person

RECEIPTS = "/admin/executor/receipt/"
CHAIN = "/admin/executor/receiptchain/"


def _person(username, tenant=None, *grants, staff=False):
    """A person with tenant grants and, when staff, the receipt and chain view permissions."""
    user = make_person(username)
    for perm in grants:
        assign_perm(perm, user, tenant)
    if staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
        user.user_permissions.set(
            Permission.objects.filter(codename__in=["view_receipt", "view_receiptchain"])
        )
    return user


@pytest.fixture
def auditor_only(agent):
    return _person("ann-auditor", agent.tenant, AUDIT, staff=True)


@pytest.fixture
def reviewer_only(agent):
    return _person("rita-reviewer", agent.tenant, DECIDE)


@pytest.fixture
def both(agent):
    return _person("bo-both", agent.tenant, AUDIT, DECIDE, staff=True)


@pytest.fixture
def neither(agent):
    return _person("nell-nobody")


def _nav(client) -> str:
    response = client.get("/review/")
    assert response.status_code == 200
    return response.content.decode().split('<nav aria-label="Main">')[1].split("</nav>")[0]


def test_someone_who_only_audits_lands_on_the_receipts(client, auditor_only):
    client.force_login(auditor_only)
    response = client.get("/review/")
    assert response.status_code == 302 and response["Location"] == RECEIPTS
    assert client.get(RECEIPTS).status_code == 200


def test_signing_in_at_the_review_ui_brings_an_auditor_to_the_receipts(client, auditor_only):
    signed_in = client.post("/accounts/login/?next=/review/", {"username": "ann-auditor", "password": "pw"})
    assert signed_in["Location"] == "/review/"
    assert client.get("/review/")["Location"] == RECEIPTS


def test_a_reviewer_lands_on_the_queue_without_audit_links(client, reviewer_only):
    client.force_login(reviewer_only)
    nav = _nav(client)
    assert "Review queue" in nav
    assert RECEIPTS not in nav and CHAIN not in nav


def test_someone_who_reviews_and_audits_sees_the_queue_with_receipts_and_chain(client, both):
    client.force_login(both)
    nav = _nav(client)
    assert f'<a href="{RECEIPTS}">Receipts</a>' in nav
    assert f'<a href="{CHAIN}">Chain</a>' in nav


def test_someone_without_roles_sees_the_empty_queue_and_no_audit_links(client, neither):
    client.force_login(neither)
    nav = _nav(client)
    assert RECEIPTS not in nav and CHAIN not in nav


def test_an_auditor_the_admin_would_refuse_stays_on_the_review_ui(client, agent):
    """Audit grant but not staff: the admin would send them to sign in again, so the queue it is."""
    person = _person("no-staff-auditor", agent.tenant, AUDIT)
    client.force_login(person)
    assert client.get("/review/").status_code == 200
    assert landing(person) == "/review/"


def test_the_landing_and_links_show_only_the_auditors_own_tenant(
    client, agent, other_agent, remember, marker
):
    remember(f"home {marker}")
    foreign_auditor = _person("foreign-auditor", other_agent.tenant, AUDIT, staff=True)
    client.force_login(foreign_auditor)
    assert client.get("/review/")["Location"] == RECEIPTS
    receipts = client.get(RECEIPTS).content.decode()
    assert marker not in receipts and agent.tenant.name not in receipts
    assert "0 receipts" in receipts


def test_the_landing_costs_a_fixed_number_of_queries(client, auditor_only, django_assert_max_num_queries):
    client.force_login(auditor_only)
    with django_assert_max_num_queries(12):
        client.get("/review/")
