"""Every event a memory's life causes reaches the receiver as metadata: its statement never does."""

import json

import pytest

from notifications.events import EVENT_TYPES
from notifications.models import WebhookDelivery
from proposals.models import OutboxEntry, Proposal
from provenance.services import invalidate_evidence_revision
from tests.factories import (
    apply_entry,
    apply_released,
    approve,
    create_payload,
    factor_fact,
    make_evidence,
    make_person,
    submit,
)
from tests.notifications.conftest import endpoint
from tests.notifications.receiver import http_receiver
from tests.workers import celery_worker, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def test_no_delivered_body_contains_the_statement_or_evidence(agent, marker, quick_retries, tmp_path):
    evidence = make_evidence(agent.agent, content={"note": f"evidence-{marker}"})
    memory = factor_fact(content={**factor_fact()["content"], "statement": f"statement-{marker}"})
    with http_receiver() as standard, http_receiver() as slack:
        endpoint(agent.tenant, standard.url, *EVENT_TYPES)
        endpoint(agent.tenant, slack.url, *EVENT_TYPES, format="slack")
        with celery_worker(tmp_path, beat=True, queues=("notifications",)):
            proposal = submit(agent.agent, create_payload(memory, [evidence]))
            for n in range(proposal.required_approvals):
                approve(make_person(f"rev-{n}", agent.tenant), proposal, reason=f"reason-{marker}")
            assert apply_released(proposal).outcome == "applied"
            invalidate_evidence_revision(revision=evidence, reason=f"why-{marker}")
            fence = Proposal.objects.get(tenant=agent.tenant, action="fence")
            apply_entry(OutboxEntry.objects.filter(proposal=fence).latest("created_at").id)
            expected = WebhookDelivery.objects.count() // 2
            wait_until(lambda: len(standard.effects) == len(slack.effects) == expected, what="all delivered")
    kinds = {json.loads(r.body)["type"] for r in standard.requests}
    assert {"proposal.pending_review", "proposal.decided", "receipt.written"} <= kinds
    assert {"evidence.invalidated", "memory.fenced"} <= kinds
    for request in [*standard.requests, *slack.requests]:
        assert marker not in request.body.decode()
    assert all(set(json.loads(r.body)) == {"text"} for r in slack.requests)
    assert marker not in json.dumps(list(WebhookDelivery.objects.values_list("payload", flat=True)))
