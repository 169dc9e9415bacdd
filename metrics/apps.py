from django.apps import AppConfig
from django.conf import settings


class MetricsConfig(AppConfig):
    name = "metrics"
    verbose_name = "Metrics"

    def ready(self) -> None:
        """Listen for what other apps report (only when metrics are on: off, nothing records)."""
        from metrics import checks  # noqa: F401  (registers the system checks)

        if not settings.CUSTODIAN_METRICS:
            return
        from celery.signals import task_postrun, task_prerun, worker_process_shutdown

        from core.signals import proposals_submitted, receipts_appended
        from metrics import receivers

        proposals_submitted.connect(receivers.proposals_submitted, dispatch_uid="metrics.proposals_submitted")
        receipts_appended.connect(receivers.receipts_appended, dispatch_uid="metrics.receipts_appended")
        task_prerun.connect(receivers.task_starting, dispatch_uid="metrics.task_starting")
        task_postrun.connect(receivers.task_finished, dispatch_uid="metrics.task_finished")
        worker_process_shutdown.connect(_process_exiting, dispatch_uid="metrics.process_exiting")


def _process_exiting(sender: object = None, pid: int | None = None, **kwargs: object) -> None:
    from metrics.receivers import process_exiting

    if pid is not None:
        process_exiting(pid)
