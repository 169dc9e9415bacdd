"""One processor chain for every log line: structlog's own loggers and the stdlib ones alike.

``logging_config`` builds Django's ``LOGGING``: a single handler whose formatter is structlog's
``ProcessorFormatter``, so a line from Django, Celery or ``logging.getLogger(__name__)`` in our
modules gets the same fields (level, logger, timestamp, the request and correlation ids bound in
the context) as one from ``structlog.get_logger()``. ``json`` writes one JSON object per line
(production, containers); ``console`` writes coloured, aligned lines for a terminal (``make run``).

Plain Python at import time: ``config.settings`` calls ``logging_config`` while settings load.
"""

from typing import Any

import structlog

FORMATS = ("json", "console")
# Celery's own lines about beat jobs that ran and found nothing (``telemetry.sweeps``).
QUIET_LOGGERS = ("celery.app.trace", "celery.worker.strategy", "celery.beat")


def shared_processors() -> list[Any]:
    """What every line gets, whether structlog or the stdlib logged it."""
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
    ]


def renderer(log_format: str) -> Any:
    """The last processor: a JSON object per line, or the console's readable columns."""
    if log_format == "console":
        return structlog.dev.ConsoleRenderer()
    return structlog.processors.JSONRenderer()


def formatter_processors(log_format: str) -> list[Any]:
    """What the formatter runs after the shared chain: tracebacks as a field (JSON), then render."""
    steps: list[Any] = [structlog.stdlib.ProcessorFormatter.remove_processors_meta]
    if log_format == "json":
        # Frames without their local variables: those hold statements, queries and tokens.
        frames = structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
        steps += [structlog.processors.StackInfoRenderer(), structlog.processors.ExceptionRenderer(frames)]
    return [*steps, renderer(log_format)]


def logging_config(*, log_format: str, level: str, quiet_tasks: list[str]) -> dict[str, Any]:
    """Django's ``LOGGING`` for ``log_format`` (``json`` or ``console``); refuse anything else.

    ``quiet_tasks``: the beat jobs whose idle runs Celery's own lines must not report at INFO.
    """
    if log_format not in FORMATS:
        raise ValueError(f"CUSTODIAN_LOG_FORMAT must be one of {', '.join(FORMATS)}, not {log_format!r}")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "structlog": {
                "()": structlog.stdlib.ProcessorFormatter,
                "processors": formatter_processors(log_format),
                "foreign_pre_chain": shared_processors(),
            }
        },
        "filters": {"idle_sweeps": {"()": "telemetry.sweeps.IdleSweepFilter", "tasks": quiet_tasks}},
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "structlog"}},
        "loggers": {name: {"filters": ["idle_sweeps"]} for name in QUIET_LOGGERS},
        "root": {"handlers": ["console"], "level": level},
    }


def configure_structlog() -> None:
    """Send structlog's events through the stdlib, where ``LOGGING``'s formatter renders them."""
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *shared_processors(),
            structlog.stdlib.PositionalArgumentsFormatter(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )


def get_logger(name: str) -> Any:
    """A structlog logger under the stdlib name ``name`` (levels and handlers as ``LOGGING`` says)."""
    return structlog.stdlib.get_logger(name)
