from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "tenancy"
    verbose_name = "Tenants and agent credentials"

    def ready(self) -> None:
        # Audit receiver, OpenAPI auth extension, the trusted-proxy check.
        from tenancy import checks, receivers, schema  # noqa: F401
