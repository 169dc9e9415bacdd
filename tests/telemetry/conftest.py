"""Capture what the service logs, rendered by the real JSON processor chain, one parsed object per line."""

import io
import json
import logging
from collections.abc import Callable, Iterator

import pytest
import structlog

from telemetry.logs import formatter_processors, shared_processors


@pytest.fixture
def json_lines() -> Iterator[Callable[[], list[dict]]]:
    """Every line logged during the test (any logger, INFO and up), as the JSON format writes it."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=formatter_processors("json"), foreign_pre_chain=shared_processors()
        )
    )
    handler.setLevel(logging.INFO)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    finally:
        root.removeHandler(handler)
