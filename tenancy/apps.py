from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "tenancy"
    verbose_name = "Tenants and agent credentials"

    def ready(self) -> None:
        from tenancy import receivers, schema  # noqa: F401  (audit receiver, OpenAPI auth extension)
