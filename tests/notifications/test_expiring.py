"""A review window about to close is announced once, to webhooks and to the tenant's reviewers."""

from datetime import timedelta

import pytest
from django.utils import timezone

from notifications.models import EmailDelivery, WebhookDelivery
from proposals.models import Proposal
from proposals.services import expire_overdue_reviews
from proposals.services.notices import announce_expiring_reviews
from tests.factories import create_payload, factor_fact, make_evidence, make_person, submit
from tests.notifications.conftest import endpoint

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_expiring_review_is_announced_once_then_its_expiry(agent):
    hook = endpoint(agent.tenant, "https://hooks.example/", "proposal.expiring", "proposal.expired")
    person = make_person("rev-exp", agent.tenant)
    person.email = "rev-exp@desk.example"
    person.save(update_fields=["email"])
    proposal = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    later = submit(
        agent.agent, create_payload(factor_fact(dedupe_key="f:later"), [make_evidence(agent.agent)])
    )
    Proposal.objects.filter(pk=proposal.pk).update(review_deadline=timezone.now() + timedelta(hours=2))
    Proposal.objects.filter(pk=later.pk).update(review_deadline=timezone.now() + timedelta(days=3))
    assert announce_expiring_reviews() == 1
    assert announce_expiring_reviews() == 0
    expiring = WebhookDelivery.objects.get(endpoint=hook, event_type="proposal.expiring")
    assert expiring.payload["data"]["proposal_id"] == str(proposal.pk)
    assert EmailDelivery.objects.filter(user=person, event_type="proposal.expiring").count() == 1
    Proposal.objects.filter(pk=proposal.pk).update(review_deadline=timezone.now() - timedelta(seconds=1))
    assert expire_overdue_reviews() == 1
    expired = WebhookDelivery.objects.get(endpoint=hook, event_type="proposal.expired")
    assert expired.payload["data"]["status"] == "expired"
