"""Celery beat job over proposals: closing lapsed reviews (the sweeps are in ``maintenance.tasks``)."""

from core.tasks import shared_task
from proposals.services import expire_overdue_reviews


@shared_task(name="proposals.expire_reviews", ignore_result=True)
def expire_reviews_task() -> int:
    """Expire proposals whose review window closed."""
    return expire_overdue_reviews()
