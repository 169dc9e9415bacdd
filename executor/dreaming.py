"""The executor's check of a Dreaming run's frozen window, before any of its actions applies.

Every member must still be at its frozen revision, or have moved only by
applied actions of the same run (a merge's duplicate going dormant); the
evidence each member rested on when frozen must still be valid. Otherwise the
action is ``stale`` (not applied, with a receipt) and the run is closed
``stale``, so no later action of it ever applies (those still waiting for
reviewers are withdrawn).
"""

import uuid
from typing import Any

from django.utils import timezone

from evidence.models import EvidenceRevision
from executor.models import Receipt
from maintenance.dreaming.runs import withdraw_open_actions
from memory_core.models import Memory
from proposals.models import DreamingRun


def window_member_ids(runs: dict[Any, DreamingRun]) -> list[uuid.UUID]:
    return [uuid.UUID(member_id) for run in runs.values() for member_id in run.member_ids]


def window_refusal(run: DreamingRun, memories: dict[Any, Memory]) -> tuple[str, frozenset[str]]:
    """Why no action of ``run`` may apply now ("" if none), and the members the run itself moved."""
    if run.closed:
        return f"dreaming run {run.pk} is {run.closed}: {run.closed_reason}", frozenset()
    moved: dict[uuid.UUID, tuple[int, int]] = {}
    for member in run.members:
        memory = memories.get(uuid.UUID(member["memory_id"]))
        if memory is None or memory.tenant_id != run.tenant_id:
            return f"window member {member['memory_id']} no longer exists", frozenset()
        if memory.revision != member["revision"]:
            moved[memory.pk] = (member["revision"], memory.revision)
    if moved:
        writes = Receipt.objects.filter(
            tenant_id=run.tenant_id, memory_id__in=list(moved), outcome=Receipt.Outcome.APPLIED
        ).values_list("memory_id", "after_revision", "proposal__dreaming_run_id")
        explained: dict[uuid.UUID, int] = {}
        for memory_id, after, run_id in writes:
            frozen, _ = moved[memory_id]
            if after is None or after <= frozen:
                continue
            if run_id != run.pk:
                return (
                    f"window member {memory_id} was changed by another proposal after freezing",
                    frozenset(),
                )
            explained[memory_id] = max(explained.get(memory_id, 0), after)
        for memory_id, (frozen, now) in moved.items():
            if explained.get(memory_id) != now:
                return f"window member {memory_id} moved from revision {frozen} to {now}", frozenset()
    frozen_evidence = [e for member in run.members for e in member.get("evidence", [])]
    invalid = (
        EvidenceRevision.objects.filter(pk__in=frozen_evidence)
        .exclude(status=EvidenceRevision.Status.VALID)
        .values_list("pk", "status")
        .first()
    )
    if invalid:
        return f"evidence revision {invalid[0]} of the window is {invalid[1]}", frozenset()
    return "", frozenset(str(pk) for pk in moved)


def close_stale(run: DreamingRun, reason: str) -> None:
    """Close the run ``stale`` (in the executor's transaction): none of its later actions applies,
    and those still waiting for reviewers are withdrawn."""
    run.closed, run.closed_reason, run.closed_at = DreamingRun.Closed.STALE, reason, timezone.now()
    run.save(update_fields=["closed", "closed_reason", "closed_at"])
    withdraw_open_actions(run)
