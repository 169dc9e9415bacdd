"""MGP async tasks: a proposal waiting for people, or an export, sync or import run later.

Results are computed when asked for and never stored: they hold memory
content, which must not outlive a purge. An async import runs when it is
first polled (unless cancelled before); its memories are dropped from the
task once it ran.
"""

import uuid
from typing import Any

from mgp import selectors, services
from mgp.models import MgpTask
from mgp.validation import MgpError
from tenancy.models import Agent


def authorised_task(agent: Agent, task_id: uuid.UUID | None) -> tuple[MgpTask, dict]:
    """The agent's own task and the policy context it may be read in now.

    Another agent's task answers exactly as a missing one; a task acting for a
    subject whose grant was revoked since is refused as REST refuses the
    subject (``acting_for_not_granted``), whatever it would have served.
    """
    mine = MgpTask.objects.filter(tenant_id=agent.tenant_id, agent=agent)
    task = mine.filter(pk=task_id).first() if task_id is not None else None
    if task is None:
        raise MgpError("MGP_TASK_NOT_FOUND", "No task with this id")
    context = {
        key: value
        for key, value in ((task.request or {}).get("context") or {}).items()
        if key != "acting_for_subject"
    }
    if task.acting_for:
        context["acting_for_subject"] = task.acting_for
    return task, services.authorise(agent, context)


def describe(task: MgpTask, context: dict) -> dict[str, Any]:
    """The task as MGP shows it, moved along first; what it serves is read now, in ``context``."""
    if task.proposal_id is not None:
        return services.task_json(task, services.follow_proposal(task, context))
    result = None
    if task.operation in ("export", "sync") and task.status in (
        MgpTask.Status.PENDING,
        MgpTask.Status.COMPLETED,
    ):
        request = task.request
        result = selectors.export(task.agent, context, request["payload"], sync=task.operation == "sync")
        if task.status == MgpTask.Status.PENDING:
            task.status = MgpTask.Status.COMPLETED
            task.save()
    elif task.operation == "import" and task.status == MgpTask.Status.PENDING:
        task.status = MgpTask.Status.RUNNING
        task.save()
        request = task.request
        task.result = run_import(task.agent, context, task.request_id, request["payload"])
        task.status, task.request = MgpTask.Status.COMPLETED, {}
        task.save()
    return services.task_json(task, result if result is not None else task.result)


def run_import(agent: Agent, context: dict, request_id: str, payload: dict) -> dict[str, Any]:
    """Write each memory as an MGP write would (each a proposal); the ids written come back."""
    ids = []
    for index, memory in enumerate(payload["memories"]):
        item = {
            "memory": memory,
            **({"merge_hint": payload["merge_hint"]} if payload.get("merge_hint") else {}),
        }
        try:
            services.write(agent, context, request_id, item, key=f"{request_id}:{index}")
        except MgpError:
            continue
        ids.append(memory["memory_id"])
    return {"memory_ids": ids, "written_count": len(ids)}
