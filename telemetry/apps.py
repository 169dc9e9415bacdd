from django.apps import AppConfig


class TelemetryConfig(AppConfig):
    name = "telemetry"
    verbose_name = "Logs and traces"

    def ready(self) -> None:
        """Route structlog through the stdlib handlers Django's ``LOGGING`` set up."""
        import logging

        from telemetry.logs import configure_structlog

        logging.captureWarnings(True)  # a warning is a line like any other, not raw stderr
        configure_structlog()
