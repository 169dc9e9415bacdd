"""Traces stay off unless the standard OpenTelemetry variables ask for them."""

import pytest

from telemetry.tracing import wanted


@pytest.mark.parametrize(
    ("environ", "exporter"),
    [
        ({}, None),
        ({"OTEL_SERVICE_NAME": "custodian"}, None),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, "otlp"),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, "otlp"),
        ({"OTEL_TRACES_EXPORTER": "console"}, "console"),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, None),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, None),
        ({"OTEL_TRACES_EXPORTER": "zipkin"}, "zipkin"),  # refused with one error line by configure_tracing
    ],
)
def test_which_variables_turn_tracing_on(environ, exporter):
    assert wanted(environ) == exporter
