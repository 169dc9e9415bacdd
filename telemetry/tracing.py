"""OpenTelemetry traces: off unless the standard variables ask for them.

Tracing starts when ``OTEL_TRACES_EXPORTER`` names an exporter (``otlp`` or ``console``), or,
with that variable unset, when ``OTEL_EXPORTER_OTLP_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set (then OTLP over HTTP/protobuf). ``none`` and
``OTEL_SDK_DISABLED=true`` keep it off. Everything else the exporter reads itself from the
standard variables (endpoint, headers, timeout; ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``).

Each process configures it once when it starts (``config.wsgi`` for gunicorn's workers and
``runserver``; ``worker_process_init`` for each Celery worker process, after the fork), then
Django requests, Celery tasks and psycopg statements (SQL with placeholders, never their
parameters) become spans. The outbox row keeps the submitting request's ``traceparent``; the
executor's ``custodian.apply`` span links to every entry it applies (``apply_span``).
"""

import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

logger = logging.getLogger(__name__)
EXPORTERS = ("otlp", "console")
_enabled = False


def wanted(environ: Mapping[str, str] = os.environ) -> str | None:
    """The exporter the environment asks for, or None when tracing stays off."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter:
        return None if exporter == "none" else exporter
    endpoints = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    return "otlp" if any(environ.get(name) for name in endpoints) else None


def configure_tracing(service_name: str) -> bool:
    """Install the tracer provider and instrument Django, Celery and psycopg, if configured; once.

    Call in the process that serves (after any fork: the batch exporter runs a thread).
    An exporter name Custodian does not know is one error line, and no tracing.
    """
    global _enabled
    exporter_name = wanted()
    if _enabled or exporter_name is None:
        return _enabled
    if exporter_name not in EXPORTERS:
        logger.error(
            "OTEL_TRACES_EXPORTER=%s is not supported (use %s or none); tracing stays off",
            exporter_name,
            ", ".join(EXPORTERS),
        )
        return False
    _install_provider(service_name, exporter_name)
    _instrument()
    _enabled = True
    return True


def _install_provider(service_name: str, exporter_name: str) -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

    exporter: SpanExporter
    if exporter_name == "console":
        exporter = ConsoleSpanExporter()
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()
    # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES over the default.
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)


def _instrument() -> None:
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

    DjangoInstrumentor().instrument()
    CeleryInstrumentor().instrument()
    PsycopgInstrumentor().instrument(skip_dep_check=True)


def enabled() -> bool:
    return _enabled


def propagation_headers() -> dict[str, str]:
    """The current span as W3C ``traceparent`` (and ``tracestate``); empty when tracing is off."""
    if not _enabled:
        return {}
    from opentelemetry.propagate import inject

    carrier: dict[str, str] = {}
    inject(carrier)
    return {key: carrier[key] for key in ("traceparent", "tracestate") if key in carrier}


@contextmanager
def apply_span(contexts: Sequence[Mapping[str, Any]]) -> Iterator[None]:
    """One ``custodian.apply`` span around an executor batch, linked to each submitting request's span."""
    if not _enabled:
        yield
        return
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    propagator = TraceContextTextMapPropagator()
    links = []
    for context in contexts:
        if context.get("traceparent"):
            span_context = trace.get_current_span(propagator.extract(dict(context))).get_span_context()
            if span_context.is_valid:
                links.append(trace.Link(span_context))
    tracer = trace.get_tracer("custodian.executor")
    with tracer.start_as_current_span("custodian.apply", links=links, attributes={"entries": len(contexts)}):
        yield


def flush() -> None:
    """Export what has ended (a test, or a process about to exit)."""
    if _enabled:
        from opentelemetry import trace

        provider: Any = trace.get_tracer_provider()
        provider.force_flush()
