"""Celery beat job over proposals: closing lapsed reviews (the sweeps are in ``maintenance.tasks``)."""

from core.tasks import shared_task
from proposals.services import expire_overdue_reviews
from proposals.services.notices import announce_expiring_reviews


@shared_task(name="proposals.expire_reviews", ignore_result=True)
def expire_reviews_task() -> int:
    """Expire proposals whose review window closed."""
    return expire_overdue_reviews()


@shared_task(name="proposals.announce_expiring_reviews", ignore_result=True)
def announce_expiring_reviews_task() -> int:
    """Tell reviewers and integrators a day ahead which review windows are closing."""
    return announce_expiring_reviews()
