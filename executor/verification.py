"""Verify a tenant: its receipt chain, that its memories, links and entities changed only through receipts.

A big tenant is verified on every core: the chain is cut into seq ranges
(each checked from the stored hash just before it, which the previous
range verifies) and the memories into id ranges, and the pieces (with the
evidence check) run in forked processes. Inside a transaction (tests, an
import) or for a small tenant everything runs here, in order.
"""

import logging
import multiprocessing
import os
import uuid
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db import connection, connections, transaction
from django.db.models import F

from executor.audit import evidence_problems, memory_problems
from executor.chain import head_problem, verify_chain_range
from executor.graph import graph_problems
from executor.models import ChainVerification, ReceiptChain
from notifications import events
from notifications.events import Event
from notifications.services import record_event

logger = logging.getLogger(__name__)
PARALLEL_FROM_RECEIPTS = 20_000
# (function, args, kwargs), run here or in a worker process
Job = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]


@dataclass(frozen=True)
class Verification:
    receipts: int
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_tenant(
    tenant_id: Any, *, processes: int | None = None, verification_id: Any = None
) -> Verification:
    """Recompute the tenant's chain and check its memories; return what verified and the problems.

    With ``verification_id``, each chain range adds what it verified to that
    ChainVerification row as it goes, so the chain panel can show progress.

    A verification that cannot finish (a row it cannot read or hash, a lost
    connection) is a failed one, with the reason as its problem: it never
    raises, so a "verify now" is always recorded and never stays running.
    """
    try:
        return _verify_tenant(tenant_id, processes, verification_id)
    except Exception as exc:
        logger.exception("verification of tenant %s could not finish", tenant_id)
        return Verification(0, [f"verification could not finish: {type(exc).__name__}: {exc}"[:2000]])


def _verify_tenant(tenant_id: Any, processes: int | None, verification_id: Any) -> Verification:
    problem = head_problem(tenant_id)
    if problem:
        return Verification(0, [problem])
    last = ReceiptChain.objects.filter(tenant_id=tenant_id).values_list("seq", flat=True).first() or 0
    parts = processes or os.cpu_count() or 1
    if last < PARALLEL_FROM_RECEIPTS or connection.in_atomic_block:
        parts = 1
    progress = {"on_progress": partial(record_progress, verification_id)} if verification_id else {}
    chain_jobs: list[Job] = [
        (verify_chain_range, (tenant_id, first, end), progress) for first, end in _seq_ranges(last, parts)
    ]
    memory_jobs: list[Job] = [(memory_problems, (tenant_id,), {"ids": ids}) for ids in _id_ranges(parts)]
    memory_jobs += [(evidence_problems, (tenant_id,), {}), (graph_problems, (tenant_id,), {})]
    results = _run([*chain_jobs, *memory_jobs], parts)
    count = 0
    for verified, chain_break in results[: len(chain_jobs)]:
        count += verified
        if chain_break:
            return Verification(count, [str(chain_break)])
    return Verification(
        count, [problem for problems in results[len(chain_jobs) :] for problem in problems][:20]
    )


@transaction.atomic
def report_failure(tenant_id: Any, verification: Verification, *, verification_id: Any = None) -> None:
    """Tell integrators a verification failed: counts and ids, never what the problems say."""
    record_event(
        Event(
            tenant_id=tenant_id,
            type=events.CHAIN_VERIFICATION_FAILED,
            data={
                "verification_id": str(verification_id) if verification_id else None,
                "receipts_verified": verification.receipts,
                "problems": len(verification.problems),
            },
        )
    )


def record_progress(verification_id: Any, verified: int) -> None:
    """Add ``verified`` receipts to a running verification's count (one UPDATE, safe from any process)."""
    ChainVerification.objects.filter(pk=verification_id).update(receipts=F("receipts") + verified)


def _seq_ranges(last: int, parts: int) -> list[tuple[int, int]]:
    if last == 0:
        return []
    step = -(-last // parts)
    return [(first, min(first + step - 1, last)) for first in range(1, last + 1, step)]


def _id_ranges(parts: int) -> list[tuple[str, str | None] | None]:
    """Cut the UUID space into ``parts`` equal ranges (ids are random, so the ranges are even)."""
    if parts == 1:
        return [None]
    bounds: list[str | None] = [str(uuid.UUID(int=2**128 * n // parts)) for n in range(parts)] + [None]
    return [(str(bounds[n]), bounds[n + 1]) for n in range(parts)]


def _run(jobs: list[Job], parts: int) -> list[Any]:
    if parts == 1:
        return [function(*args, **kwargs) for function, args, kwargs in jobs]
    connections.close_all()  # each forked process opens its own connection
    with ProcessPoolExecutor(parts, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = [pool.submit(function, *args, **kwargs) for function, args, kwargs in jobs]
        return [future.result() for future in futures]
