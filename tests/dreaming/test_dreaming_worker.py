"""A Dreaming pass run by the beat task on a real worker (least-privilege executor role on PostgreSQL)."""

import pytest
import redis
from django.conf import settings
from django.core.management import call_command

from executor.models import Receipt
from maintenance.tasks import dreaming_pass_task
from memory_core.models import MemoryLink
from proposals.models import DreamingRun
from proposals.selectors import dreaming_run_status, dreaming_runs
from tests.workers import celery_worker, wait_until

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def broker():
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.flushdb()
    yield client
    client.flushdb()


def test_the_beat_task_plans_and_the_worker_applies_a_merge(
    agent, remember, dreaming_mode, broker, tmp_path, capsys
):
    dreaming_mode("auto")
    survivor = remember("Alice prefers weekly summaries")
    duplicate = remember("Alice prefers weekly summaries")
    with celery_worker(tmp_path):
        dreaming_pass_task.delay()
        wait_until(
            lambda: (
                Receipt.objects.filter(proposal__dreaming_run__isnull=False, outcome="applied").count() == 2
            ),
            what="both actions of the run applied",
        )
    run = dreaming_runs(tenants=[agent.tenant.pk]).get()
    assert dreaming_run_status(run) == "applied" and run.mode == DreamingRun.Mode.AUTO
    assert MemoryLink.objects.filter(source=survivor, target=duplicate, relation="supersedes").exists()
    call_command("verify_receipts")
    assert "receipts verified" in capsys.readouterr().out
