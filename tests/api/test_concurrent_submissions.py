"""Fifty concurrent identical submissions with one Idempotency-Key create one proposal."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from proposals.models import Proposal
from tests.factories import create_payload, make_evidence, user_preference

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_parallel_identical_submissions_make_one_proposal(agent):
    payload = create_payload(user_preference(), [make_evidence(agent.agent)])

    def post(_):
        try:
            response = agent.client.post(
                "/api/v1/proposals/", payload, format="json", HTTP_IDEMPOTENCY_KEY="burst"
            )
            return response.status_code, response.json()["id"]
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(post, range(50)))
    assert {status for status, _ in results} == {201}
    assert len({proposal_id for _, proposal_id in results}) == 1
    assert Proposal.objects.count() == 1
