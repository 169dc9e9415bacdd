"""What a purge takes from the MGP binding: the memory's MGP id, extensions and what tasks kept."""

from typing import Any

from django.utils import timezone

from mgp.models import MgpEvent, MgpRecord, MgpTask


def scrub_purged(*, tenant_id: Any, memory_ids: list, **_: Any) -> dict[str, int]:
    """Remove the purged memories' MGP records and scrub the tasks that name them.

    The ``memory_purged`` receiver: it runs in the executor's purge
    transaction (as its database role). Records hold the client's memory id,
    ``source`` and ``extensions``; a task about the memory holds its stored
    context (the subject), its answer (the MGP id) and whom it acted for; an
    import's result lists the MGP ids it wrote; a refusal's audit row names
    the MGP id it was about. Tasks and refusals stay, as receipts do, with
    only the Custodian memory id (tasks) or nothing (refusals) left.
    """
    records = MgpRecord.objects.filter(tenant_id=tenant_id, memory_id__in=memory_ids)
    external_ids = set(records.values_list("external_id", flat=True))
    now, scrubbed = timezone.now(), 0
    for task_id, memory_id in MgpTask.objects.filter(
        tenant_id=tenant_id, proposal__target_id__in=memory_ids
    ).values_list("pk", "proposal__target_id"):
        answer = {"kind": "state", "memory_id": str(memory_id), "state": "purged"}
        scrubbed += MgpTask.objects.filter(pk=task_id).update(
            request={"context": {}, "answer": answer},
            result=None,
            subject_kind="",
            subject_id="",
            updated_at=now,
        )
    scrubbed += _drop_from_imports(tenant_id, external_ids, now)
    named = external_ids | {str(memory_id) for memory_id in memory_ids}
    blanked = MgpEvent.objects.filter(tenant_id=tenant_id, target__in=named).blank_targets()
    return {"mgp.MgpRecord": records.delete()[0], "mgp.MgpTask": scrubbed, "mgp.MgpEvent": blanked}


def _drop_from_imports(tenant_id: Any, external_ids: set, now) -> int:
    """Take the purged MGP ids, and whom the import acted for, out of the imports that list them."""
    if not external_ids:
        return 0
    changed = 0
    imports = MgpTask.objects.filter(tenant_id=tenant_id, operation="import", result__isnull=False)
    for task_id, stored in imports.values_list("pk", "result"):
        result = stored or {}
        ids = result.get("memory_ids") or []
        kept = [memory_id for memory_id in ids if memory_id not in external_ids]
        if len(kept) != len(ids):
            changed += MgpTask.objects.filter(pk=task_id).update(
                result={**result, "memory_ids": kept, "written_count": len(kept)},
                subject_kind="",
                subject_id="",
                updated_at=now,
            )
    return changed
