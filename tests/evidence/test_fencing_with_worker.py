"""The invalidate → fence → corrected run → review → unfence flow with a real Celery worker."""

import pytest
import redis
from django.conf import settings

from executor.models import Receipt
from proposals.models import Proposal
from provenance.services import add_evidence_revision
from tests.factories import approve, create_payload, factor_fact, make_evidence, make_person, submit
from tests.workers import celery_worker, wait_until

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_backtest_invalidation_and_correction_end_to_end(agent, api, tmp_path):
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    pm = make_person("pm-e2e", agent.tenant)
    backtest = make_evidence(agent.agent, {"factor": "momentum_12_1", "ic_mean": 0.03})
    fact = submit(agent.agent, create_payload(factor_fact(), [backtest]))
    memory_id = fact.target_id
    agent.agent.can_invalidate_evidence = True
    agent.agent.save(update_fields=["can_invalidate_evidence"])

    def state():
        return api.get(f"/api/v1/memories/{memory_id}/").json().get("memory", {}).get("state")

    with celery_worker(tmp_path):
        approve(pm, fact)
        wait_until(lambda: state() == "active", what="factor conclusion applied")
        url = f"/api/v1/evidence/{backtest.source_id}/revisions/1/invalidate/"
        assert api.post(url, {"reason": "look-ahead bias"}, format="json").status_code == 200
        assert state() == "fenced"  # at once, before any worker runs
        wait_until(
            lambda: Receipt.objects.filter(proposal__action="fence", outcome="applied").exists(),
            what="fence receipt",
        )
        add_evidence_revision(source=backtest.source, agent=agent.agent, content={"ic_mean": 0.011})
        revalidation = Proposal.objects.get(action="revalidate", target_id=memory_id)
        approve(pm, revalidation)
        wait_until(lambda: state() == "active", what="revalidated memory unfenced")
    receipt = Receipt.objects.get(proposal=revalidation)
    assert receipt.outcome == "applied" and receipt.after_revision == 2
