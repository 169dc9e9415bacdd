from django.apps import AppConfig


class HealthConfig(AppConfig):
    name = "health"
    verbose_name = "Health probes"

    def ready(self) -> None:
        """Let executor workers record that they run (read by GET /readyz's worker check)."""
        from celery.signals import task_prerun, worker_ready

        from health import heartbeat

        worker_ready.connect(heartbeat.worker_started, dispatch_uid="health.worker_started")
        task_prerun.connect(heartbeat.task_starting, dispatch_uid="health.task_starting")
