"""MGP over Custodian's governance: names and events (``records``), proposals and tasks
(``proposing``), and the write, update and lifecycle calls (``writes``)."""

from mgp.services.proposing import cancel_task, follow_proposal, start_task, task_json, translate
from mgp.services.records import authorise, existing, record_bulk_read, record_refusal, render
from mgp.services.writes import lifecycle, update, write

__all__ = [
    "authorise",
    "cancel_task",
    "existing",
    "follow_proposal",
    "lifecycle",
    "record_bulk_read",
    "record_refusal",
    "render",
    "start_task",
    "task_json",
    "translate",
    "update",
    "write",
]
