"""PostgreSQL: published registrations are fixed, and only the executor publishes (every role's trigger)."""

import psycopg
import pytest
from django.core.management import call_command

from maintenance.schema_evolution import request_publication, validate_candidate
from registrations.services import draft_registration
from tests.factories import apply_released, approve
from tests.registrations.conftest import with_sector
from tests.workers import connect_as

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
REFUSED = (psycopg.errors.InsufficientPrivilege, psycopg.errors.RaiseException)


@pytest.fixture
def published(agent, operator, publisher):
    call_command("setup_db_roles")
    candidate = draft_registration(tenant_id=agent.tenant.pk, document=with_sector(), created_by="op")
    validate_candidate(candidate=candidate)
    proposal = request_publication(
        tenant=agent.tenant, candidate_id=candidate.pk, requested_by=operator, reason=""
    )
    approve(publisher, proposal)
    assert apply_released(proposal).outcome == "applied"
    return candidate


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE registrations_registration SET document = '{}' WHERE status = 'active'",
        "UPDATE registrations_registration SET fingerprint = repeat('0', 64) WHERE status = 'active'",
        "UPDATE registrations_registration SET status = 'draft' WHERE status = 'active'",
        "UPDATE registrations_registration SET version = 9 WHERE status = 'active'",
        "DELETE FROM registrations_registration",
    ],
)
def test_a_published_registration_is_fixed_for_every_role(published, statement):
    for role in ("custodian_web", "custodian_executor", None):
        with connect_as(role) as conn, pytest.raises(REFUSED):
            conn.execute(statement)


def test_the_web_role_cannot_make_a_candidate_active(published, agent):
    draft = draft_registration(tenant_id=agent.tenant.pk, document=with_sector(), created_by="op")
    with connect_as("custodian_web") as web, pytest.raises(REFUSED):
        web.execute(f"UPDATE registrations_registration SET status = 'active' WHERE id = '{draft.pk}'")
    with connect_as("custodian_web") as web, pytest.raises(REFUSED):
        web.execute(f"UPDATE registrations_registration SET version = 3 WHERE id = '{draft.pk}'")


def test_the_web_and_executor_roles_draft_request_decide_and_publish_on_their_grants(
    agent, operator, publisher
):
    from proposals.models import Proposal
    from tests.executor.test_roles_run_the_app import _drain, connected_as
    from tests.reviews.test_review_api import _decide, person_client

    call_command("setup_db_roles", verbosity=0)
    reviewer = person_client(publisher)
    with connected_as("custodian_web"):
        candidate = draft_registration(tenant_id=agent.tenant.pk, document=with_sector(), created_by="op")
        validate_candidate(candidate=candidate)
        proposal = request_publication(
            tenant=agent.tenant, candidate_id=candidate.pk, requested_by=operator, reason=""
        )
        assert _decide(reviewer, proposal).status_code == 201
    with connected_as("custodian_executor"):
        assert _drain() == 1
    candidate.refresh_from_db()
    assert (candidate.status, candidate.version) == ("active", 2)
    assert Proposal.objects.get(pk=proposal.pk).status == Proposal.Status.APPLIED
