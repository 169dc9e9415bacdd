"""The processor chain itself: JSON lines, tracebacks without locals, a bad format refused."""

import json
import logging

import pytest

from telemetry.logs import logging_config


def test_an_exception_line_names_frames_but_never_their_local_variables(json_lines):
    statement = "Alice's private statement that must never be logged"
    try:
        raise ValueError("refused")
    except ValueError:
        logging.getLogger("custodian.test").exception("could not apply %s", "entry-1")
    [line] = json_lines()
    assert line["event"] == "could not apply entry-1" and line["level"] == "error"
    assert line["exception"][0]["exc_type"] == "ValueError"
    assert statement not in json.dumps(line) and "locals" not in json.dumps(line)


def test_a_stdlib_line_gets_the_bound_ids(json_lines):
    import structlog

    with structlog.contextvars.bound_contextvars(request_id="r-1", correlation_id="c-1"):
        logging.getLogger("django.request").warning("slow")
    [line] = json_lines()
    assert (line["request_id"], line["correlation_id"], line["logger"]) == ("r-1", "c-1", "django.request")


def test_an_unknown_format_is_one_clear_error():
    with pytest.raises(ValueError, match="CUSTODIAN_LOG_FORMAT must be one of json, console"):
        logging_config(log_format="xml", level="INFO", quiet_tasks=[])
