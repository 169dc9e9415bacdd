"""In PostgreSQL, grants, decisions and their history take one change besides a revocation: a
subject's id becoming its pseudonym, in the listed column, once; and only the executor makes it.

Triggers hold for every role (the owner included); grants keep the web role to revoking.
"""

import psycopg
import pytest
from django.core.management import call_command

from core.pseudonyms import pseudonym
from executor.services import apply_entries
from proposals.models import OutboxEntry, Proposal
from reviews.models import ReviewDecision
from tenancy.models import Delegation
from tests.erasure.conftest import ask
from tests.erasure.test_pseudonyms import _owner, _pending_about
from tests.executor.test_roles_run_the_app import connected_as
from tests.factories import approve
from tests.workers import connect_as

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
OWNER, WEB, EXECUTOR = None, "custodian_web", "custodian_executor"
REFUSED_BY_TRIGGER = psycopg.errors.RaiseException
NOT_GRANTED = psycopg.errors.InsufficientPrivilege


@pytest.fixture
def decided(agent, subject, reviewers):
    """Roles set up; a decision made for ``subject`` (and its history row); the subject's grant."""
    call_command("setup_db_roles", verbosity=0)
    return approve(reviewers[0], _pending_about(agent, subject))


def _set(table: str, assignment: str, where: str) -> str:
    return f"UPDATE {table} SET {assignment} WHERE {where}"  # the tests' own SQL


@pytest.mark.parametrize("table", ["reviews_reviewdecision", "reviews_historicalreviewdecision"])
def test_a_decision_takes_only_its_owners_pseudonym_and_only_from_the_executor(decided, subject, table):
    erased = pseudonym("user", subject["id"])
    mine = f"represented_owner = '{_owner(subject)}'"
    with connect_as(WEB) as web, pytest.raises(NOT_GRANTED):
        web.execute(_set(table, f"represented_owner = '{erased}'", mine))
    for role in (EXECUTOR, OWNER):
        with connect_as(role) as conn:
            for refused in (
                "represented_owner = 'user:someone-else'",
                "represented_owner = 'erased:not-a-digest'",
            ):
                with pytest.raises(REFUSED_BY_TRIGGER):
                    conn.execute(_set(table, refused, mine))
    with connect_as(OWNER) as owner, pytest.raises(REFUSED_BY_TRIGGER):
        owner.execute(_set(table, f"represented_owner = '{erased}', decision = 'reject'", mine))
    with connect_as(OWNER) as owner, pytest.raises(REFUSED_BY_TRIGGER):
        owner.execute(_set(table, f"reason = '{erased}'", mine))  # a pseudonym, in another column
    with connect_as(EXECUTOR) as executor:
        assert executor.execute(_set(table, f"represented_owner = '{erased}'", mine)).rowcount == 1
        with pytest.raises(REFUSED_BY_TRIGGER):  # once: a pseudonym is never replaced
            executor.execute(_set(table, f"represented_owner = '{pseudonym('user', 'x')}'", "true"))
    with connect_as(OWNER) as owner, pytest.raises(REFUSED_BY_TRIGGER):
        owner.execute(f"DELETE FROM {table}")


def test_a_grant_is_revoked_once_and_renamed_only_to_its_pseudonym(decided, subject):
    erased = pseudonym("user", subject["id"])
    mine = f"subject_id = '{subject['id']}'"
    with connect_as(WEB) as web:
        for refused in (f"subject_id = '{erased}'", "reason = 'rewritten'", "agent_id = agent_id"):
            with pytest.raises(NOT_GRANTED):
                web.execute(_set("tenancy_delegation", refused, mine))
        with pytest.raises(NOT_GRANTED):
            web.execute(_set("tenancy_historicaldelegation", f"subject_id = '{erased}'", mine))
        assert web.execute(_set("tenancy_delegation", "revoked_at = now()", mine)).rowcount == 1
    with connect_as(OWNER) as owner:
        for refused in ("revoked_at = NULL", "subject_id = 'someone-else'", f"reason = '{erased}'"):
            with pytest.raises(REFUSED_BY_TRIGGER):
                owner.execute(_set("tenancy_delegation", refused, mine))
        with pytest.raises(REFUSED_BY_TRIGGER):
            owner.execute(_set("tenancy_historicaldelegation", "history_change_reason = 'x'", mine))
        with pytest.raises(REFUSED_BY_TRIGGER):
            owner.execute("DELETE FROM tenancy_historicaldelegation")
    with connect_as(EXECUTOR) as executor:
        assert executor.execute(_set("tenancy_delegation", f"subject_id = '{erased}'", mine)).rowcount == 1
        assert executor.execute(
            _set("tenancy_historicaldelegation", f"subject_id = '{erased}'", mine)
        ).rowcount
    assert not Delegation.objects.filter(subject_id=subject["id"]).exists()


def test_the_web_asks_and_decides_and_the_executor_pseudonymises_on_their_grants_alone(
    agent, api, subject, reviewers
):
    call_command("setup_db_roles", verbosity=0)
    with connected_as(WEB):
        approve(reviewers[0], _pending_about(agent, subject))
        erasure = Proposal.objects.get(pk=ask(api, subject).json()["erasure_id"])
        for person in reviewers[: erasure.required_approvals]:
            approve(person, erasure)
    with connected_as(EXECUTOR):
        pending = OutboxEntry.objects.filter(proposal=erasure).values_list("id", flat=True)
        assert apply_entries(entry_ids=list(pending), worker={"host": "t", "pid": 0, "task_id": "roles"}) == 1
    erasure.refresh_from_db()
    assert erasure.status == "applied"
    assert not ReviewDecision.objects.filter(represented_owner=_owner(subject)).exists()
    assert not Delegation.objects.filter(subject_id=subject["id"]).exists()
    call_command("verify_receipts")
