"""Bulk seeding for benchmarks: COPY rows that the real models built, so the seeded world verifies.

Submitting and applying through the services manages a few hundred
memories a second; a benchmark needs a million. Here every row is still a
model instance with the values the real code would give it: the verdict
comes from the real policy engine (``freeze_and_classify`` once per kind of
proposal), memories come from the executor's own ``new_memory``, and the
five digests per memory are the models' own (the request body's
``digest``, ``compute_action_digest``, ``content_hash``, the executor's
``memory_hash`` of the revision and its links, ``compute_hash``), each
computed once. Values they cover are plain strings, not TextChoices
members, so ``core.canonical`` takes its fast path. Only the writing
differs: batches of instances go to PostgreSQL with COPY, one transaction
per batch, on a second thread while the next batch is built; each batch
locks the receipt chain head and advances it in the same transaction. The
seeded world passes ``verify_receipts`` and ``executor.audit.memory_problems``.

Not written: proposal history rows (``proposals_historicalproposal``) and
agents' recall audit rows; nothing verifies or lists them.

Seeding the same tenant twice with generators of the same seed repeats
idempotency keys and fails on their unique constraint: use a fresh seed.
"""

from bench.seed.applied import seed_applied_memories
from bench.seed.floor import FloorResult, FloorRows, floor_copy, floor_executemany, floor_rows
from bench.seed.queues import seed_pending_proposals, seed_released_backlog
from bench.seed.rows import copy_rows, new

__all__ = [
    "FloorResult",
    "FloorRows",
    "copy_rows",
    "floor_copy",
    "floor_executemany",
    "floor_rows",
    "new",
    "seed_applied_memories",
    "seed_pending_proposals",
    "seed_released_backlog",
]
