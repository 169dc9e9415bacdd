from django.apps import AppConfig


class ProposalsConfig(AppConfig):
    name = "proposals"

    def ready(self) -> None:
        from proposals import checks, receivers  # noqa: F401  (registers checks and signal receivers)
