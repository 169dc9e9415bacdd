"""Beat jobs that found nothing stay out of the INFO log; a sweep that did something says so."""

import logging

import pytest
from celery.app.trace import LOG_RECEIVED, LOG_SUCCESS

from executor.services import sweep_outbox
from tests.factories import create_payload, make_evidence, submit, user_preference

SWEEP = "executor.sweep_outbox"


def _celery_lines(name: str, return_value: str) -> None:
    """Log what Celery's worker logs for one run of task ``name`` (its own loggers and formats)."""
    logging.getLogger("celery.beat").info("Scheduler: Sending due task %s (%s)", "sweep-outbox", name)
    logging.getLogger("celery.worker.strategy").info(
        LOG_RECEIVED, {"id": "t-1", "name": name, "args": "()", "kwargs": "{}", "eta": None}
    )
    logging.getLogger("celery.app.trace").info(
        LOG_SUCCESS, {"id": "t-1", "name": name, "return_value": return_value, "runtime": 0.01, "args": "()"}
    )


def test_an_idle_beat_job_leaves_no_info_line(json_lines):
    _celery_lines(SWEEP, "0")
    _celery_lines("proposals.retention_sweep", "0")
    assert json_lines() == []


def test_a_beat_job_that_did_something_keeps_its_succeeded_line(json_lines):
    _celery_lines(SWEEP, "3")
    [line] = json_lines()
    assert line["event"].endswith("succeeded in 0.01s: 3") and line["level"] == "info"


def test_other_tasks_keep_celerys_lines(json_lines):
    _celery_lines("executor.apply_entry", "None")
    assert len(json_lines()) == 3  # not a beat job: sent, received and succeeded all stay


@pytest.mark.django_db
def test_a_sweep_with_nothing_due_logs_nothing_and_one_with_work_logs_it(agent, json_lines):
    sweep_outbox()
    assert json_lines() == []
    # Released in a transaction that never commits here: no nudge, only the sweep finds it.
    submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    sweep_outbox()
    [line] = json_lines()
    assert line["logger"] == "executor.services" and line["level"] == "info"
    assert line["event"].startswith("outbox sweep")
