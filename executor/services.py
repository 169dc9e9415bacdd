"""The executor owns the outbox, the only writes to memories, and receipts.

Delivery is at least once (Celery with late acks plus the sweep); the effect
is exactly once because applying an entry is one transaction that locks the
entry, returns early if it is already done, and finishes by marking it done
next to its receipt (``UNIQUE(receipt.outbox_entry)`` is the backstop).

Leases only decide who tries an entry when (``executor.leases``): a worker
leases entries as their holder, and the sweep takes over at once those whose
holder the database says is gone (a killed worker, a restarted database), so
recovery never waits for a lease to run out.
"""

import logging
import time
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import Error, InterfaceError, OperationalError, connection, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from executor.applying import apply_batch
from executor.chain import append_receipt
from executor.leases import give_back, holder, no_holder, reclaim_orphaned
from executor.models import ChainVerification, Receipt, ReceiptChain
from executor.verification import report_failure, verify_tenant
from memory_core.embeddings import active_embedder, embedded_text, embeds
from memory_core.mutations import current_revisions, store_vectors_if_current
from memory_core.selectors import revisions_without_vector
from proposals.models import OutboxEntry, Proposal
from proposals.services.outbox import clear_nudge, enqueue, nudge_due, publish_nudge
from telemetry.context import bound
from telemetry.logs import get_logger
from telemetry.tracing import apply_span

logger = logging.getLogger(__name__)
apply_log = get_logger("custodian.executor")
Outcome = Receipt.Outcome
# How long a worker that lost the database waits for it before leaving its entries to the sweep;
# below the task's soft time limit.
OUTAGE_WAIT_SECONDS = 30
VERIFY_CHAIN_TASK = "executor.verify_chain"  # sent by name: executor.tasks imports this module
# The catch-up for lost vector tasks: revisions unchanged this long, this many a run.
MISSING_VECTORS_SETTLED = 300.0
MISSING_VECTORS_LIMIT = 500
_SHUTDOWN = ("57P01", "57P02", "57P03")  # admin_shutdown, crash_shutdown, cannot_connect_now


def apply_entries(*, entry_ids: list[Any], worker: dict[str, Any]) -> int:
    """Apply outbox entries, each exactly once; return how many receipts were written.

    The executor's one entry point (the Celery tasks call it); ``worker``
    names the process (host, pid, task id) in every receipt.

    If the batch fails, each entry is retried alone, so one poison entry
    costs the others nothing: only its failure is recorded and, past the
    attempt cap, only it is dead-lettered. A failure that lost the database
    is no entry's fault: nothing is recorded against them, they are given
    back once the database answers again (``_give_back_after_outage``).
    """
    try:
        claimed = _claim(entry_ids)
        contexts = list(claimed.values())
        # One entry (the usual nudge): every line of its apply names the request that wrote it.
        with bound(contexts[0] if len(contexts) == 1 else {}), apply_span(contexts):
            return _apply_claimed(list(claimed), worker, claimed)
    except Exception as exc:
        if not _database_lost(exc):
            _record_failures(entry_ids, exc)
            raise
        _give_back_after_outage(entry_ids)
        return 0


def _apply_claimed(pending: list[Any], worker: dict[str, Any], contexts: dict[Any, dict[str, Any]]) -> int:
    written = 0
    while pending:
        started = time.perf_counter()
        try:
            receipts, pending = apply_batch(pending, worker)
        except Exception as exc:
            if _database_lost(exc):
                raise
            if len(pending) == 1:
                _record_failure(pending[0], exc)
                return written
            logger.warning("a batch of %s entries failed (%s); applying each alone", len(pending), exc)
            return written + sum(_apply_alone(entry_id, worker, contexts) for entry_id in pending)
        _log_applied(receipts, contexts, started)
        written += len(receipts)
    return written


def _apply_alone(entry_id: Any, worker: dict[str, Any], contexts: dict[Any, dict[str, Any]]) -> int:
    started = time.perf_counter()
    with bound(contexts.get(entry_id, {})):
        try:
            receipts, _ = apply_batch([entry_id], worker)
        except Exception as exc:
            if _database_lost(exc):
                raise
            _record_failure(entry_id, exc)
            return 0
        _log_applied(receipts, contexts, started)
    return len(receipts)


def _log_applied(receipts: list[Receipt], contexts: dict[Any, dict[str, Any]], started: float) -> None:
    """One line per receipt, under the ids of the request that wrote its entry; ids and hashes only."""
    duration_ms = round((time.perf_counter() - started) * 1000, 2)
    for receipt in receipts:
        with bound(contexts.get(receipt.outbox_entry_id, {})):
            apply_log.info(
                "entry.applied",
                proposal_id=str(receipt.proposal_id),
                outbox_entry_id=str(receipt.outbox_entry_id),
                tenant_id=str(receipt.tenant_id),
                outcome=receipt.outcome,
                receipt_seq=receipt.seq,
                receipt_hash=receipt.hash[:12],
                batch_size=len(receipts),
                duration_ms=duration_ms,
            )


def _database_lost(exc: Exception) -> bool:
    """Whether ``exc`` says the connection to PostgreSQL was lost (an outage, no entry's fault).

    The server ended the session (57P01-03), the connection failed (class 08), or the client
    saw the socket go without a server error at all. A refused write, a deadlock or a
    statement timeout is about the entries, and is recorded against them as before; so is
    every error on SQLite.
    """
    if connection.vendor != "postgresql" or not isinstance(exc, Error):
        return False
    if isinstance(exc, InterfaceError):
        return True
    state = getattr(exc.__cause__, "sqlstate", None)
    return isinstance(exc, OperationalError) and (state is None or state[:2] == "08" or state in _SHUTDOWN)


def _give_back_after_outage(entry_ids: list[Any]) -> None:
    """Wait (bounded, backing off) for the database, then make the entries due again and nudge.

    If the database stays away, the sweep takes them over once it returns
    (their holder, the connection that leased them, died with the outage).
    """
    delay, deadline = 0.5, time.monotonic() + OUTAGE_WAIT_SECONDS
    logger.warning("lost the database while applying %s outbox entries; waiting for it", len(entry_ids))
    while True:
        try:
            given_back = give_back(entry_ids=entry_ids)
            break
        except Error:
            connection.close()
            if time.monotonic() + delay > deadline:
                logger.warning("the database is still away; the sweep takes the entries over once it is back")
                return
            time.sleep(delay)
            delay = min(delay * 2, 4)
    logger.info("the database is back: %s outbox entries are due again", given_back)
    if given_back:
        nudge_due()


def _record_failures(entry_ids: list[Any], exc: Exception) -> None:
    """Put a failed batch back for a later attempt, so no entry stays leased to a task that ended.

    Best effort: if the database refuses even this, the sweep takes the entries over once their
    holder's connection is gone or idle (``executor.leases``).
    """
    for entry_id in entry_ids:
        try:
            _record_failure(entry_id, exc)
        except Exception:
            logger.exception("could not record the failure of outbox entry %s", entry_id)
            return


def _record_failure(entry_id: Any, exc: Exception) -> None:
    logger.error("outbox entry %s failed: %s", entry_id, exc, exc_info=exc)
    record_attempt_failure(entry_id=entry_id, error=f"{type(exc).__name__}: {exc}")


@transaction.atomic(durable=True)
def _claim(entry_ids: list[Any]) -> dict[Any, dict[str, Any]]:
    """Count an attempt for each entry in its own committed transaction; dead-letter past the cap.

    Return the ids claimed, each with the trace context its row keeps. The locks
    wait (in key order, like the batch's, so no deadlock): entries this worker
    just leased may be locked for an instant by another worker's lease scan, and
    skipping them would strand them, leased and unclaimed, until their lease
    expired. A copy of a message whose entry another worker is applying waits
    for that batch, then finds it done.
    """
    entries = (
        OutboxEntry.objects.select_for_update()
        .filter(pk__in=entry_ids)
        .exclude(status__in=[OutboxEntry.Status.DONE, OutboxEntry.Status.DEAD])
        .order_by("pk")
    )
    claimed: dict[Any, dict[str, Any]] = {}
    for entry in entries:
        if entry.attempts >= settings.CUSTODIAN_OUTBOX_MAX_ATTEMPTS:
            entry.status = OutboxEntry.Status.DEAD
            entry.lease_expires_at = None
            entry.save(update_fields=["status", "lease_expires_at", "updated_at"])
            logger.error("outbox entry %s dead-lettered after %s attempts", entry.id, entry.attempts)
            continue
        if entry.requeued_from_id:
            # Here, not in the apply step: the receipt must survive a successor that fails too.
            _close_requeued_predecessor(entry, Proposal.objects.get(pk=entry.proposal_id))
        claimed[entry.pk] = entry.trace_context or {}
    now = timezone.now()
    OutboxEntry.objects.filter(pk__in=claimed).update(
        attempts=F("attempts") + 1,
        status=OutboxEntry.Status.DISPATCHED,
        lease_expires_at=now + timedelta(seconds=settings.CUSTODIAN_OUTBOX_LEASE_SECONDS),
        updated_at=now,
        **holder(),
    )
    return claimed


@transaction.atomic(durable=True)
def record_attempt_failure(*, entry_id: Any, error: str) -> None:
    """Put a failed entry back for the sweep, after a capped exponential backoff."""
    entry = OutboxEntry.objects.select_for_update().filter(pk=entry_id).first()
    if entry is None or entry.is_finished:
        return
    delay = min(2**entry.attempts, 300)
    entry.status = OutboxEntry.Status.PENDING
    entry.available_at = timezone.now() + timedelta(seconds=delay)
    entry.lease_expires_at = None
    entry.lease_holder_pid = entry.lease_holder_started_at = None
    entry.last_error = error[:4000]
    entry.save(
        update_fields=[
            "status",
            "available_at",
            "lease_expires_at",
            "lease_holder_pid",
            "lease_holder_started_at",
            "last_error",
            "updated_at",
        ]
    )


def _due(now: datetime) -> QuerySet[OutboxEntry]:
    """Entries anyone may take: pending and ready, or leased with the lease run out."""
    return OutboxEntry.objects.filter(
        Q(status=OutboxEntry.Status.PENDING, available_at__lte=now)
        | Q(status=OutboxEntry.Status.DISPATCHED, lease_expires_at__lt=now)
    )


@transaction.atomic(durable=True)
def lease_due_entries(*, limit: int, queued: bool = False) -> list[Any]:
    """Lease due entries to this worker's connection (``executor.leases``); return their ids.

    ``queued``: the ids go into broker messages instead, so the lease has no
    holder and only its expiry ends it. ``skip_locked`` lets several sweeps,
    and workers holding entries, run side by side without waiting on each other.
    """
    now = timezone.now()
    due = (
        _due(now)
        .select_for_update(skip_locked=True)
        .order_by("available_at")
        .values_list("id", flat=True)[:limit]
    )
    ids = list(due)
    OutboxEntry.objects.filter(pk__in=ids).update(
        status=OutboxEntry.Status.DISPATCHED,
        lease_expires_at=now + timedelta(seconds=settings.CUSTODIAN_OUTBOX_LEASE_SECONDS),
        updated_at=now,
        **(no_holder() if queued else holder()),
    )
    return ids


def apply_nudged(*, worker: dict[str, Any]) -> int:
    """Take a coalesced nudge: clear its key, lease a batch of what is due, and apply it.

    The key goes first: an entry committed before the delete is seen by the lease that follows;
    one committed after it finds no key and publishes, or finds a newer key whose message follows
    (``proposals.services.outbox``). A full lease may leave due entries behind: the nudge is passed
    on before applying, so an idle worker leases the next batch while this one applies, and a
    burst drains on every worker at once.
    """
    clear_nudge()
    size = settings.CUSTODIAN_EXECUTOR_BATCH
    ids = lease_due_entries(limit=size)
    if len(ids) >= size:
        nudge_due()
    return apply_entries(entry_ids=ids, worker=worker) if ids else 0


def embed_revisions(*, revisions: list[tuple[Any, int]]) -> int:
    """Embed applied memory revisions and store each vector only if its memory is still there.

    The embedder runs outside any transaction; the store is a short one that
    compares each revision under the row lock, so a vector never lands on a
    later revision or a purged memory. Return how many were stored.
    """
    embedder = active_embedder()
    memories = current_revisions(revisions) if embedder.dimensions else []
    if not memories:
        return 0
    vectors = embedder.embed([embedded_text(memory.content) for memory in memories])
    with transaction.atomic(durable=True):
        return store_vectors_if_current(memories, vectors, embedder=embedder.name)


def embed_missing(
    *, settled_seconds: float = MISSING_VECTORS_SETTLED, limit: int = MISSING_VECTORS_LIMIT
) -> int:
    """Embed current revisions left without a vector: the catch-up for a vector task that was lost.

    With ``CUSTODIAN_VECTORS=queued`` a vector is sent as a task after the batch
    commits; a broker down at that moment loses the message, not the memory. Only
    revisions that have settled (no change for ``settled_seconds``) are taken, so a
    task still in flight is not doubled. Return how many were stored.
    """
    if settings.CUSTODIAN_VECTORS != "queued" or not embeds():
        return 0
    settled = timezone.now() - timedelta(seconds=settled_seconds)
    rows = revisions_without_vector(embedder=active_embedder().name).filter(updated_at__lt=settled)
    return embed_revisions(revisions=list(rows.values_list("pk", "revision")[:limit]))


def sweep_outbox() -> list[list[str]]:
    """Take over the leases whose holder is gone, then dispatch what is due; return batches of ids to send.

    Coalesced, the sweep leases nothing: it publishes one "apply what is
    due" nudge, and the worker taking it leases a batch as its holder (and
    passes the nudge on while more is due), so no entry sits under a lease
    in a message a dead worker may have taken with it. Otherwise it leases
    batches for messages that name them (``lease_for_sweep``).
    """
    reclaimed = reclaim_orphaned()
    if reclaimed:
        logger.info("outbox sweep took back %s entries whose holder is gone", reclaimed)
    if settings.CUSTODIAN_NUDGE_COALESCE:
        if _due(timezone.now()).exists():
            logger.info("outbox sweep found entries due; nudged the executor")
            publish_nudge()
        return []
    ids = [str(entry_id) for entry_id in lease_for_sweep()]
    if ids:
        logger.info("outbox sweep dispatched %s due entries", len(ids))
    size = settings.CUSTODIAN_EXECUTOR_BATCH
    return [ids[start : start + size] for start in range(0, len(ids), size)]


def lease_for_sweep() -> list[Any]:
    """Lease what the sweep may dispatch now, keeping at most ``CUSTODIAN_OUTBOX_MAX_IN_FLIGHT``
    entries under a live lease, so a large backlog never waits in the queue until its leases expire.
    """
    in_flight = OutboxEntry.objects.filter(
        status=OutboxEntry.Status.DISPATCHED, lease_expires_at__gte=timezone.now()
    ).count()
    room = min(settings.CUSTODIAN_OUTBOX_MAX_IN_FLIGHT - in_flight, settings.CUSTODIAN_OUTBOX_SWEEP_BATCH)
    return lease_due_entries(limit=room, queued=True) if room > 0 else []


@transaction.atomic(durable=True)
def requeue_dead_entry(*, entry: OutboxEntry, requested_by: str) -> OutboxEntry:
    """Give a dead-lettered entry a fresh successor (run from the admin, as the web role).

    Only an outbox row is written here; the executor writes the dead entry's
    ``requeued`` receipt when it takes the successor, so the web role never
    needs to write receipts.
    """
    entry = OutboxEntry.objects.select_for_update().get(pk=entry.pk)
    if entry.status != OutboxEntry.Status.DEAD or OutboxEntry.objects.filter(requeued_from=entry).exists():
        raise ValueError(f"Entry {entry.id} is {entry.status}; only a dead entry can be requeued, once")
    return enqueue(
        entry.proposal, available_at=timezone.now(), requeued_from=entry, requested_by=requested_by
    )


def _close_requeued_predecessor(entry: OutboxEntry, proposal: Proposal) -> None:
    """Write the ``requeued`` receipt of the dead entry this one replaces (once)."""
    dead = OutboxEntry.objects.select_for_update().get(requeued_as=entry)
    if dead.status == OutboxEntry.Status.DONE:
        return
    append_receipt(
        tenant_id=dead.tenant_id,
        proposal=proposal,
        outbox_entry=dead,
        outcome=Outcome.REQUEUED,
        reason=f"requeued by {entry.requested_by} as {entry.id} after: {dead.last_error[:500]}",
        memory_id=proposal.target_id,
        action_digest=dead.action_digest,
        evidence=proposal.evidence,
        policy_fingerprint=proposal.policy_fingerprint,
        executor={"requested_by": entry.requested_by},
    )
    dead.status = OutboxEntry.Status.DONE
    dead.save(update_fields=["status", "updated_at"])


@transaction.atomic(durable=True)
def request_chain_verification(*, tenant_id: Any, requested_by: str) -> ChainVerification:
    """Queue a verification of the tenant's chain (from the admin, as the web role); a task runs it.

    Verifying a big chain takes minutes on every core, so it never runs in the request.
    """
    verification = ChainVerification.objects.create(tenant_id=tenant_id, requested_by=requested_by)
    transaction.on_commit(lambda: _nudge_verification(verification.pk))
    return verification


def _nudge_verification(verification_id: Any) -> None:
    current_app.send_task(VERIFY_CHAIN_TASK, args=[str(verification_id)])


def run_chain_verification(*, verification_id: Any) -> ChainVerification:
    """Verify the chain a queued request names and record the result where the admin shows it.

    Not one transaction: the verification forks readers for a big tenant, and
    "running" and its progress (``receipts`` of ``total``) must be visible while it works.
    A request already taken returns as it is.
    """
    verification = ChainVerification.objects.get(pk=verification_id)
    head = (
        ReceiptChain.objects.filter(tenant_id=verification.tenant_id).values_list("seq", flat=True).first()
        or 0
    )
    taken = ChainVerification.objects.filter(
        pk=verification_id, status=ChainVerification.Status.QUEUED
    ).update(status=ChainVerification.Status.RUNNING, started_at=timezone.now(), total=head, receipts=0)
    if not taken:
        return verification
    result = verify_tenant(verification.tenant_id, verification_id=verification.pk)
    verification.status = ChainVerification.Status.OK if result.ok else ChainVerification.Status.BROKEN
    verification.head_seq, verification.total, verification.receipts = head, head, result.receipts
    verification.problems, verification.finished_at = result.problems, timezone.now()
    with transaction.atomic():
        verification.save(update_fields=["status", "head_seq", "receipts", "problems", "finished_at"])
        if not result.ok:
            report_failure(verification.tenant_id, result, verification_id=verification.pk)
    return verification


def record_chain_verification(
    *, tenant_id: Any, started_at: datetime, result: Any, requested_by: str
) -> ChainVerification:
    """Record a verification that already ran (``verify_receipts``), as "verify now" records its own.

    The chain panel and the metrics read the newest finished verification of each tenant,
    so a verification run from the command line counts as much as one asked for in the admin.
    """
    status = ChainVerification.Status.OK if result.ok else ChainVerification.Status.BROKEN
    return ChainVerification.objects.create(
        tenant_id=tenant_id,
        requested_by=requested_by[:150],
        status=status,
        started_at=started_at,
        finished_at=timezone.now(),
        head_seq=result.receipts,
        receipts=result.receipts,
        total=result.receipts,
        problems=result.problems,
    )
