"""What every part gets: the stack, the scale and a progress-bar factory."""

import itertools
from dataclasses import dataclass, field

from tqdm import tqdm

from bench.stack import Stack

_keys = itertools.count(1)


def next_number() -> int:
    """A process-wide counter: unique idempotency keys and memory content across parts."""
    return next(_keys)


@dataclass(frozen=True)
class Scale:
    """Sizes of every part; ``smoke`` keeps CI to seconds, ``full`` is the issue's sizes."""

    name: str
    repeats: int
    submit_requests_1: int
    submit_requests_8: int
    e2e_requests: int
    drain_backlog: int
    recall_sizes: tuple[int, ...]
    recall_queries: int
    review_pending: int
    page_renders: int
    floor_rows: int
    quality_conversations: tuple[int, int]  # conversations, sessions each
    long_chats: tuple[int, int | None] = (10, None)  # conversations, sessions each (None: 20-30)
    quality_sets: tuple[str, ...] = ("templated", "long_chats", "long_chats_unnamed")  # quality part's sets
    adjacency_questions: int = 200  # quality questions asked again with context.neighbours 1, per set
    batch_proposals: int = 600  # submit part: proposals sent through POST /api/v1/proposals/batch
    conversation_turns: int = 300  # conversation part: turns loaded in batches, submitted → applied
    export_lines: int = 20_000  # lines of the receipts export streamed per recall size
    dreaming_memories: int = 100_000  # dreaming part: active memories the pass reads
    dreaming_windows: int = 1_000  # dreaming part: windows the pass freezes, plans and proposes
    drain_workers: tuple[int, ...] = (1, 2, 4)  # drain part: executor worker processes per run
    drain_tenants: tuple[int, ...] = (1, 4)  # drain part: tenants the backlog is spread over
    observability_submits: int = 2_000  # observability part: submits per run, bare and full each


SCALES = {
    "smoke": Scale(
        "smoke",
        1,
        20,
        40,
        10,
        60,
        (200, 600),
        20,
        150,
        3,
        500,
        (2, 6),
        long_chats=(1, 4),
        adjacency_questions=20,
        export_lines=200,
        dreaming_memories=2_000,
        dreaming_windows=50,
        drain_workers=(1, 2),
        observability_submits=40,
    ),
    "full": Scale(
        "full",
        3,
        300,
        1600,
        200,
        10_000,
        (10_000, 100_000, 1_000_000),
        200,
        100_000,
        20,
        20_000,
        (10, 14),
        batch_proposals=10_000,
        conversation_turns=5_900,
    ),
}


@dataclass
class Context:
    stack: Stack
    scale: Scale
    quiet: bool = False
    notes: list[str] = field(default_factory=list)

    def progress(self, total: int, description: str) -> tqdm:
        return tqdm(total=total, desc=description, unit="row", disable=self.quiet, leave=False, smoothing=0.1)
