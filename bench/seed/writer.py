"""Batches to PostgreSQL: one transaction each, on a second thread, and the receipt chain they extend.

Apart so the thread and transaction rules live in one place; the seeders
only build rows and hand them over.
"""

import contextlib
import queue
import threading
from collections.abc import Callable

from django.db import connection, transaction

from bench.seed.rows import _copy_all
from executor.models import Receipt, ReceiptChain

Progress = Callable[[int], None] | None


def _lock_chain(tenant_id) -> ReceiptChain:
    """Lock the tenant's chain head (creating it), as ``append_receipt`` does."""
    ReceiptChain.objects.bulk_create([ReceiptChain(tenant_id=tenant_id)], ignore_conflicts=True)
    return ReceiptChain.objects.select_for_update().get(tenant_id=tenant_id)


def _chain_receipts(receipts: list[Receipt], chain: ReceiptChain) -> None:
    """Give ``receipts`` their places after ``chain``'s head and their hashes; move the head."""
    for receipt in receipts:
        receipt.seq, receipt.prev_hash = chain.seq + 1, chain.head_hash
        receipt.hash = receipt.compute_hash()
        chain.seq, chain.head_hash = receipt.seq, receipt.hash


class _Writer:
    """Write batches on a second thread, so PostgreSQL takes one batch while the next is built.

    Each ``write`` call is its own transaction on the thread's own
    connection. Batches are written in order; at most one waits while one
    is written. Leaving the block with an exception drops the waiting batch
    and lets the one being written finish, so an interrupted seed ends on a
    committed batch. The writer's error, if any, is raised on leaving.
    """

    def __init__(self, write: Callable[[dict], None], progress: Progress):
        self._write, self._progress = write, progress
        self._todo: queue.Queue = queue.Queue(maxsize=1)
        self._done: queue.Queue = queue.Queue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="bench-seed-writer", daemon=True)

    def __enter__(self) -> "_Writer":
        self._thread.start()
        return self

    def submit(self, rows: dict, count: int) -> None:
        if self._error is not None:
            raise self._error
        self._todo.put((rows, count))
        self._report()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            with contextlib.suppress(queue.Empty):
                self._todo.get_nowait()
        self._todo.put(None)
        self._thread.join()
        if exc_type is None:
            self._report()
            if self._error is not None:
                raise self._error

    def _run(self) -> None:
        try:
            while (item := self._todo.get()) is not None:
                if self._error is None:  # after a failure, only drain so submit never blocks
                    try:
                        self._write(item[0])
                        self._done.put(item[1])
                    except BaseException as error:
                        self._error = error
        finally:
            connection.close()

    def _report(self) -> None:
        while True:
            try:
                count = self._done.get_nowait()
            except queue.Empty:
                return
            if self._progress:
                self._progress(count)


@transaction.atomic(durable=True)
def _write_rows(rows: dict[type, list]) -> None:
    _copy_all(rows)
