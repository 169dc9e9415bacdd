from django.db import models


class WorkerHeartbeat(models.Model):
    """When an executor worker node was last seen running: on start, then as it takes tasks.

    One row per Celery node name (``executor@host``). Only the executor writes it;
    GET /readyz reads the newest.
    """

    node = models.CharField(max_length=255, unique=True)
    seen_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.node} seen {self.seen_at:%Y-%m-%d %H:%M:%S}"
