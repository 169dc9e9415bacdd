"""A compromised web role forges a PM's approval, a release and an outbox row in plain SQL.

The web role must be able to insert decisions, release proposals and write
outbox rows (that is its job), so the database alone cannot stop this; the
executor re-checks who allowed the release and refuses it.
"""

import uuid

import psycopg
import pytest
import redis
from django.conf import settings
from django.core.management import call_command

from executor.models import Receipt
from memory_core.models import Memory
from proposals.models import OutboxEntry, Proposal
from tests.factories import apply_released, create_payload, factor_fact, make_evidence, make_person, submit
from tests.workers import celery_worker, wait_until
from tests.workers import test_database_url as database_url_as

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _forge_approval_and_release(proposal: Proposal, pm) -> uuid.UUID:
    """As ``custodian_web``: insert an approval "by" ``pm``, mark the proposal released, queue it."""
    call_command("setup_db_roles", verbosity=0)
    entry_id = uuid.uuid4()
    with psycopg.connect(database_url_as("custodian_web"), autocommit=True) as web:
        web.execute(
            "INSERT INTO reviews_reviewdecision (id, tenant_id, proposal_id, actor_id, represented_owner,"
            " decision, reason, action_digest, proposal_version, policy_fingerprint, channel, created_at)"
            " SELECT gen_random_uuid(), tenant_id, id, %s, 'desk', 'approve', 'looks fine', action_digest,"
            " version, policy_fingerprint, 'ui', now() FROM proposals_proposal WHERE id = %s",
            [pm.pk, proposal.pk],
        )
        web.execute("UPDATE proposals_proposal SET status = 'released' WHERE id = %s", [proposal.pk])
        web.execute(
            "INSERT INTO proposals_outboxentry (id, tenant_id, proposal_id, action_digest, status, attempts,"
            " available_at, last_error, requested_by, created_at, updated_at)"
            " SELECT %s, tenant_id, id, action_digest, 'pending', 0, now(), '', '', now(), now()"
            " FROM proposals_proposal WHERE id = %s",
            [entry_id, proposal.pk],
        )
    return entry_id


@pytest.fixture
def factor_under_review(agent):
    proposal = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    assert (proposal.status, proposal.required_approvals) == (Proposal.Status.PENDING_REVIEW, 1)
    return proposal


def test_a_forged_approval_by_a_real_pm_is_refused_by_the_executor(agent, factor_under_review):
    pm = make_person("pm-forged", agent.tenant)  # a real reviewer of this tenant, who never decided
    _forge_approval_and_release(factor_under_review, pm)

    receipt = apply_released(factor_under_review)

    assert receipt.outcome == Receipt.Outcome.UNAUTHORISED_RELEASE
    assert receipt.decision_ids == []
    assert not Memory.objects.filter(pk=factor_under_review.target_id).exists()
    factor_under_review.refresh_from_db()
    assert factor_under_review.status == Proposal.Status.NOT_APPLIED
    call_command("verify_receipts")


@pytest.fixture
def empty_broker():
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.flushdb()
    yield
    client.flushdb()


@pytest.mark.services
def test_a_real_worker_refuses_a_release_forged_by_the_web_role(
    agent, factor_under_review, empty_broker, tmp_path
):
    pm = make_person("pm-forged-worker", agent.tenant)
    entry_id = _forge_approval_and_release(factor_under_review, pm)
    with celery_worker(tmp_path, beat=True):  # as custodian_executor; the sweep finds the forged row
        wait_until(lambda: Receipt.objects.filter(outbox_entry_id=entry_id).exists(), what="receipt")
    assert Receipt.objects.get(outbox_entry_id=entry_id).outcome == "unauthorised_release"
    assert OutboxEntry.objects.get(pk=entry_id).status == OutboxEntry.Status.DONE
    assert not Memory.objects.filter(pk=factor_under_review.target_id).exists()
