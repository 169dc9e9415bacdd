"""The ids that let an operator follow one request: through the web process, the outbox row, the executor.

Each request gets a ``request_id`` (a fresh one, or the caller's ``X-Request-Id`` when it is a
safe bounded token, as a proxy in front sets it) and a ``correlation_id`` (the caller's
``X-Correlation-Id`` under the same rule, otherwise the request id). Both are bound in
structlog's context variables, so every line the request logs carries them. ``trace_context``
is what a request leaves on the outbox rows it writes (with the W3C ``traceparent`` of its span
when tracing is on); the executor binds it back while it applies them (``bound``).
"""

import re
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import structlog

from telemetry.tracing import propagation_headers

# Letters, digits and ``._:-``, starting with a letter or digit, at most 128 characters: what a
# log line, a header and a JSON column can carry without escaping or room for injection.
SAFE_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
IDS = ("request_id", "correlation_id")
PROPAGATED = ("traceparent", "tracestate")


def safe_token(value: str | None) -> str | None:
    """Return ``value`` if it is a safe bounded token (``SAFE_TOKEN``), else None."""
    if value and SAFE_TOKEN.fullmatch(value):
        return value
    return None


def new_request_id() -> str:
    return uuid.uuid4().hex


def trace_context() -> dict[str, str]:
    """The ids bound now (and the current span as ``traceparent``/``tracestate``), for an outbox row."""
    bound = structlog.contextvars.get_contextvars()
    context = {key: bound[key] for key in IDS if key in bound}
    context.update(propagation_headers())
    return context


@contextmanager
def bound(context: Mapping[str, Any]) -> Iterator[None]:
    """Bind an outbox row's request and correlation ids to every line logged inside the block."""
    ids = {key: context[key] for key in IDS if context.get(key)}
    with structlog.contextvars.bound_contextvars(**ids):
        yield
