"""System checks: a metrics setting that cannot work is one clear line at start-up."""

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

MIN_TOKEN_LENGTH = 32


@register()
def check_metrics_settings(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    problems: list[Error] = []
    token = settings.CUSTODIAN_METRICS_TOKEN
    if token and len(token) < MIN_TOKEN_LENGTH:
        problems.append(
            Error(
                f"CUSTODIAN_METRICS_TOKEN is shorter than {MIN_TOKEN_LENGTH} characters",
                hint="Generate one: python -c 'import secrets; print(secrets.token_urlsafe(32))'",
                id="metrics.E001",
            )
        )
    if settings.CUSTODIAN_METRICS_TENANT_LABELS < 0:
        problems.append(Error("CUSTODIAN_METRICS_TENANT_LABELS must be 0 or more", id="metrics.E002"))
    return problems
