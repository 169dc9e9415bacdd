"""Reviewers deciding at the same instant: never released twice, never released after a veto."""

import threading

import pytest
from django.db import connection

from core.errors import DomainError
from proposals.models import OutboxEntry, Proposal
from reviews.services import TogetherItem, decide_together, record_decision
from tests.factories import create_payload, factor_fact, make_evidence, make_person, submit

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _race(proposal, decisions: list[tuple]) -> list:
    """Run the decisions in threads released by one barrier; return each result or error code."""
    barrier = threading.Barrier(len(decisions))
    results = [None] * len(decisions)

    def run(index, user, decision):
        try:
            barrier.wait()
            record_decision(
                actor=user,
                proposal_id=proposal.pk,
                decision=decision,
                reason="race",
                represented_owner="",
                action_digest=proposal.action_digest,
                channel="api",
            )
            results[index] = "ok"
        except DomainError as error:
            results[index] = error.code
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, *d)) for i, d in enumerate(decisions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


@pytest.mark.parametrize("attempt", range(5))
def test_approve_and_reject_at_once_never_releases_after_the_veto(agent, factor_proposal, attempt):
    approver, vetoer = make_person(f"a{attempt}", agent.tenant), make_person(f"v{attempt}", agent.tenant)
    results = _race(factor_proposal, [(approver, "approve"), (vetoer, "reject")])
    factor_proposal.refresh_from_db()
    entries = OutboxEntry.objects.filter(proposal=factor_proposal).count()
    if factor_proposal.status == Proposal.Status.REJECTED:
        assert entries == 0 and results[1] == "ok"
    else:
        assert factor_proposal.status == Proposal.Status.RELEASED
        assert entries == 1 and results == ["ok", "not_under_review"]


def test_many_approvals_at_once_release_exactly_once(agent, factor_proposal):
    people = [make_person(f"pm{n}", agent.tenant) for n in range(6)]
    results = _race(factor_proposal, [(person, "approve") for person in people])
    assert results.count("ok") == 1
    assert set(results) == {"ok", "not_under_review"}
    assert OutboxEntry.objects.filter(proposal=factor_proposal).count() == 1


@pytest.mark.parametrize("attempt", range(3))
def test_two_pms_deciding_the_same_rivals_together_at_once_never_deadlock_nor_mix(agent, attempt):
    """pm1 approves A, rejects B; pm2 approves B, rejects A: one wins whole, the other records nothing."""
    a, b = (
        submit(
            agent.agent, create_payload(factor_fact(content={"statement": s}), [make_evidence(agent.agent)])
        )
        for s in ("reading A", "reading B")
    )
    people = [make_person(f"pm{attempt}-{n}", agent.tenant) for n in range(2)]
    plans = [(a, b), (b, a)]
    barrier = threading.Barrier(2)
    results: list = [None, None]

    def run(index):
        mine, theirs = plans[index]
        try:
            barrier.wait()
            decide_together(
                actor=people[index],
                proposal_id=mine.pk,
                items=[
                    TogetherItem(mine.pk, mine.action_digest, "approve"),
                    TogetherItem(theirs.pk, theirs.action_digest, "reject"),
                ],
                reason="race",
                represented_owner="",
            )
            results[index] = "ok"
        except DomainError as error:
            results[index] = (error.code, error.extra.get("cause"))
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(map(str, results)) == sorted(["ok", str(("decided_together_refused", "not_under_review"))])
    winner = results.index("ok")
    statuses = {p.pk: Proposal.objects.get(pk=p.pk).status for p in (a, b)}
    assert statuses[plans[winner][0].pk] == Proposal.Status.RELEASED
    assert statuses[plans[winner][1].pk] == Proposal.Status.REJECTED
    assert not people[1 - winner].review_decisions.exists()
