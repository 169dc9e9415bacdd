"""Celery beat jobs over proposals: closing lapsed reviews and proposing retention expiries."""

from celery import shared_task


@shared_task(name="proposals.expire_reviews", ignore_result=True)
def expire_reviews_task() -> int:
    """Expire proposals whose review window closed."""
    from proposals.services import expire_overdue_reviews

    return expire_overdue_reviews()


@shared_task(name="proposals.retention_sweep", ignore_result=True)
def retention_sweep_task() -> int:
    """Propose expiry for memories whose TTL has passed (recall already hides them)."""
    from proposals.services import propose_retention_expiries

    return propose_retention_expiries()


@shared_task(name="proposals.dormancy_sweep", ignore_result=True)
def dormancy_sweep_task() -> int:
    """Propose dormancy for memories whose activation stayed below their type's threshold."""
    from proposals.services import propose_dormancy

    return propose_dormancy()


@shared_task(name="proposals.dreaming_pass", ignore_result=True)
def dreaming_pass_task() -> int:
    """Consolidate duplicates and collisions in bounded, frozen windows (proposals only)."""
    from proposals.services.dreaming import dreaming_pass

    return dreaming_pass().runs


@shared_task(name="proposals.compaction_sweep", ignore_result=True)
def compaction_sweep_task() -> int:
    """Propose compactions for subject+scope+type groups over their registered capacity."""
    from proposals.services import propose_compactions

    return propose_compactions()
