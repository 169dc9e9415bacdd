from django.apps import AppConfig


class MemoryCoreConfig(AppConfig):
    name = "memory_core"
    verbose_name = "Memories"

    def ready(self) -> None:
        from core import lookups
        from memory_core import checks  # noqa: F401  (registers the system checks)

        lookups.register()  # field__any
