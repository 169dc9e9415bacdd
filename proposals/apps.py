from django.apps import AppConfig


class ProposalsConfig(AppConfig):
    name = "proposals"

    def ready(self) -> None:
        from proposals import checks  # noqa: F401  (registers the system checks)
