"""System checks: a malformed trusted-proxy list must stop the service before it keys callers wrongly."""

from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from tenancy.throttling import trusted_proxies


@checks.register()
def check_trusted_proxies(app_configs, **kwargs):
    try:
        trusted_proxies()
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), hint="Use comma-separated IPs or CIDRs.", id="tenancy.E001")]
    return []
