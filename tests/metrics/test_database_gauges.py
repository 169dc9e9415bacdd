"""The scrape-time gauges: what they read from the database, and that a scrape costs four queries."""

from datetime import timedelta

import pytest
from django.utils import timezone

from executor.services import record_chain_verification
from executor.verification import Verification
from health.heartbeat import record_worker_seen
from metrics.collectors import DatabaseCollector
from metrics.exposition import scrape
from proposals.models import OutboxEntry, Proposal
from tests.factories import create_payload, factor_fact, make_agent, make_evidence, submit, user_preference
from tests.metrics.scraping import parse

pytestmark = pytest.mark.django_db


def gauges():
    return parse(scrape().decode())


def pending_review(handle, n: int = 1) -> None:
    for _ in range(n):
        fact = factor_fact()
        fact["content"] = {**fact["content"], "statement": f"{fact['content']['statement']} {_}"}
        proposal = submit(handle.agent, create_payload(fact, [make_evidence(handle.agent)]))
        assert proposal.status == Proposal.Status.PENDING_REVIEW


def test_the_outbox_backlog_counts_due_entries_and_the_oldest_ones_age(agent):
    submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    entry = OutboxEntry.objects.get()
    OutboxEntry.objects.filter(pk=entry.pk).update(available_at=timezone.now() - timedelta(seconds=90))
    found = gauges()
    assert found.value("custodian_outbox_due_entries") == 1
    assert 90 <= found.value("custodian_outbox_oldest_due_age_seconds") < 600


def test_an_expired_lease_is_due_again_and_a_live_one_is_not(agent):
    submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    now = timezone.now()
    OutboxEntry.objects.update(
        status=OutboxEntry.Status.DISPATCHED, lease_expires_at=now + timedelta(minutes=1)
    )
    assert gauges().value("custodian_outbox_due_entries") == 0
    OutboxEntry.objects.update(lease_expires_at=now - timedelta(seconds=30))
    found = gauges()
    assert found.value("custodian_outbox_due_entries") == 1
    assert found.value("custodian_outbox_oldest_due_age_seconds") >= 30


def test_review_queues_are_per_tenant_and_fold_past_the_cap(settings):
    settings.CUSTODIAN_METRICS_TENANT_LABELS = 2
    for name, depth in (("desk-a", 3), ("desk-b", 2), ("desk-c", 1), ("desk-d", 1)):
        pending_review(make_agent(name, f"{name}-agent"), depth)
    found = gauges()
    depths = {labels["tenant"]: value for labels, value in found.matching("custodian_review_queue_depth")}
    assert depths == {"desk-a": 3, "desk-b": 2, "(other)": 2}
    ages = found.matching("custodian_review_oldest_pending_age_seconds")
    assert {labels["tenant"] for labels, _ in ages} == {"desk-a", "desk-b", "(other)"}
    assert all(0 <= age < 600 for _, age in ages)


def test_no_worker_ever_seen_is_an_infinite_age_then_a_heartbeat_is_fresh():
    assert gauges().value("custodian_worker_heartbeat_age_seconds") == float("inf")
    record_worker_seen(node="executor@host")
    found = gauges()
    assert found.value("custodian_worker_heartbeat_age_seconds") < 60
    assert found.value("custodian_workers_seen") == 1


def test_a_tenant_counts_as_broken_until_its_newer_verification_passes(agent, other_agent):
    started = timezone.now()
    assert gauges().value("custodian_chain_verification_age_seconds") == float("inf")
    record_chain_verification(
        tenant_id=agent.tenant.id,
        started_at=started,
        result=Verification(3, ["seq 2: hash"]),
        requested_by="t",
    )
    record_chain_verification(
        tenant_id=other_agent.tenant.id, started_at=started, result=Verification(1, []), requested_by="t"
    )
    found = gauges()
    assert found.value("custodian_chain_verification_broken_tenants") == 1
    assert found.value("custodian_chain_verification_age_seconds") < 60
    record_chain_verification(
        tenant_id=agent.tenant.id, started_at=timezone.now(), result=Verification(3, []), requested_by="t"
    )
    assert gauges().value("custodian_chain_verification_broken_tenants") == 0


def test_verify_receipts_records_each_tenants_verification(agent, applied_memory):
    from django.core.management import call_command

    from executor.models import ChainVerification

    call_command("verify_receipts")
    verification = ChainVerification.objects.get(tenant=agent.tenant)
    assert verification.status == ChainVerification.Status.OK and verification.receipts == 1
    assert verification.finished_at is not None and verification.requested_by == "verify_receipts"


def _one_scrape() -> None:
    assert list(DatabaseCollector().collect())


def test_a_scrape_costs_four_queries_however_many_tenants_and_rows(django_assert_num_queries):
    first = make_agent("desk-1", "agent-1")
    pending_review(first)
    submit(first.agent, create_payload(user_preference(), [make_evidence(first.agent)]))
    with django_assert_num_queries(4):
        _one_scrape()
    for n in range(2, 8):
        handle = make_agent(f"desk-{n}", f"agent-{n}")
        pending_review(handle, 2)
        submit(handle.agent, create_payload(user_preference(), [make_evidence(handle.agent)]))
        record_worker_seen(node=f"executor@{n}")
        record_chain_verification(
            tenant_id=handle.tenant.id,
            started_at=timezone.now(),
            result=Verification(0, []),
            requested_by="t",
        )
    with django_assert_num_queries(4):
        _one_scrape()
