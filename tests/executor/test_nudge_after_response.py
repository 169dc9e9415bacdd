"""The executor nudge is published once the submit's response is sent, not while the caller waits."""

import json

import pytest
import redis
from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.test import RequestFactory

from proposals.models import OutboxEntry
from tests.factories import create_payload, make_evidence, user_preference

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def broker():
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.flushdb()
    yield client
    client.flushdb()


@pytest.mark.parametrize("coalesce", [True, False], ids=["coalesced", "per-entry"])
def test_the_nudge_is_published_after_the_response_is_sent(agent, broker, settings, coalesce):
    settings.CUSTODIAN_NUDGE_COALESCE = coalesce
    payload = create_payload(user_preference(), [make_evidence(agent.agent)])
    environ = (
        RequestFactory()
        .post(
            "/api/v1/proposals/",
            json.dumps(payload),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {agent.token}",
            HTTP_IDEMPOTENCY_KEY="after-1",
        )
        .environ
    )
    response = WSGIHandler()(environ, lambda status, headers: None)  # as a server gets it, unsent
    assert response.status_code == 201, response.content
    entry = OutboxEntry.objects.get(proposal_id=json.loads(response.content)["id"])
    assert broker.llen("executor") == 0  # committed, answered, not yet nudged
    response.close()  # the server has sent the body
    assert broker.llen("executor") == 1
    message = json.loads(broker.lindex("executor", 0))
    assert message["headers"]["task"] == "executor.apply_entry"
    if coalesce:  # "apply whatever is due", for every entry committed until a worker takes it
        assert message["headers"]["argsrepr"] == "()"
    else:
        assert message["headers"]["id"] == str(entry.pk)
