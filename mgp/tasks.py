"""MGP async tasks: a proposal waiting for people, or an export, sync or import run later.

Results are computed when asked for and never stored: they hold memory
content, which must not outlive a purge. An async import runs when it is
first polled (unless cancelled before); its memories are dropped from the
task once it ran.
"""

from typing import Any

from mgp import selectors, services
from mgp.models import MgpTask
from mgp.validation import MgpError
from tenancy.models import Agent


def describe(task: MgpTask) -> dict[str, Any]:
    """The task as MGP shows it, moved along first."""
    if task.proposal_id is not None:
        return services.task_json(task, services.follow_proposal(task))
    result = None
    if task.operation in ("export", "sync") and task.status in (
        MgpTask.Status.PENDING,
        MgpTask.Status.COMPLETED,
    ):
        request = task.request
        result = selectors.export(
            task.agent, request["context"], request["payload"], sync=task.operation == "sync"
        )
        if task.status == MgpTask.Status.PENDING:
            task.status = MgpTask.Status.COMPLETED
            task.save()
    elif task.operation == "import" and task.status == MgpTask.Status.PENDING:
        task.status = MgpTask.Status.RUNNING
        task.save()
        request = task.request
        task.result = run_import(task.agent, request["context"], task.request_id, request["payload"])
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
