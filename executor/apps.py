from django.apps import AppConfig


class ExecutorConfig(AppConfig):
    name = "executor"

    def ready(self) -> None:
        from executor import receivers  # noqa: F401  (connects proposal_released)
