"""Celery beat jobs of maintenance: retention, dormancy, Dreaming and compaction sweeps.

The task names keep their ``proposals.`` prefix: the beat schedule and messages
already queued name them so.
"""

from core.tasks import shared_task
from maintenance.compaction import propose_compactions
from maintenance.dormancy import propose_dormancy
from maintenance.dreaming.runs import dreaming_pass
from maintenance.retention import propose_retention_expiries


@shared_task(name="proposals.retention_sweep", ignore_result=True)
def retention_sweep_task() -> int:
    """Propose expiry for memories whose TTL has passed (recall already hides them)."""
    return propose_retention_expiries()


@shared_task(name="proposals.dormancy_sweep", ignore_result=True)
def dormancy_sweep_task() -> int:
    """Propose dormancy for memories whose activation stayed below their type's threshold."""
    return propose_dormancy()


@shared_task(name="proposals.dreaming_pass", ignore_result=True)
def dreaming_pass_task() -> int:
    """Consolidate duplicates and collisions in bounded, frozen windows (proposals only)."""
    return dreaming_pass().runs


@shared_task(name="proposals.compaction_sweep", ignore_result=True)
def compaction_sweep_task() -> int:
    """Propose compactions for subject+scope+type groups over their registered capacity."""
    return propose_compactions()
