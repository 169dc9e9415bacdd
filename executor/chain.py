"""Append to and verify the per-tenant hash chain of receipts."""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import TextField
from django.db.models.functions import Cast
from django.utils import timezone

from core.canonical import digest
from core.inserts import insert_statement, run_together
from core.signals import receipts_appended
from executor.models import Receipt, ReceiptChain, uuid_text
from notifications import events
from notifications.events import Event
from notifications.services import record_events
from proposals.models import Proposal

PROGRESS_EVERY = 5000  # receipts between two progress reports of a verification


def append_receipt(*, tenant_id: Any, **fields: Any) -> Receipt:
    """Append one receipt to the tenant's chain (inside the caller's transaction)."""
    return append_receipts([{"tenant_id": tenant_id, **fields}])[0]


def append_receipts(rows: list[dict[str, Any]]) -> list[Receipt]:
    """Append receipts, in order, to their tenants' chains (inside the caller's transaction).

    The chain head rows are locked (in tenant order, so two batches never
    deadlock), so concurrent appends queue up instead of forking a chain;
    ``seq`` comes from the head, never from a sequence, so it has no gaps.
    Callers lock heads last and briefly: one bulk insert per batch.
    """
    if not rows:
        return []
    tenant_ids = sorted({row["tenant_id"] for row in rows}, key=str)
    ReceiptChain.objects.bulk_create([ReceiptChain(tenant_id=t) for t in tenant_ids], ignore_conflicts=True)
    heads = {
        str(chain.tenant_id): chain
        for chain in ReceiptChain.objects.select_for_update().filter(tenant_id__in=tenant_ids).order_by("pk")
    }
    now = timezone.now()
    receipts = []
    for row in rows:
        chain = heads[str(row["tenant_id"])]
        receipt = Receipt(seq=chain.seq + 1, prev_hash=chain.head_hash, created_at=now, **row)
        receipt.hash = receipt.compute_hash()
        chain.seq, chain.head_hash = receipt.seq, receipt.hash
        receipts.append(receipt)
    run_together([insert_statement(receipts)])
    ReceiptChain.objects.bulk_update(heads.values(), ["seq", "head_hash"])
    outcomes = [receipt.outcome for receipt in receipts]
    transaction.on_commit(lambda: receipts_appended.send(sender=Receipt, outcomes=outcomes))
    record_events(receipt_events(receipts))
    return receipts


def receipt_events(receipts: list[Receipt]) -> Iterator[Event]:
    """``receipt.written`` per receipt, and ``memory.fenced`` per fence applied (metadata only)."""
    for receipt in receipts:
        proposal = receipt.proposal
        data = {
            "receipt_id": str(receipt.id),
            "seq": receipt.seq,
            "outcome": receipt.outcome,
            "proposal_id": str(receipt.proposal_id),
            "action": proposal.action,
            "memory_id": str(receipt.memory_id) if receipt.memory_id else None,
        }
        yield Event(tenant_id=receipt.tenant_id, type=events.RECEIPT_WRITTEN, data=data)
        if proposal.action == Proposal.Action.FENCE and receipt.outcome == Receipt.Outcome.APPLIED:
            fenced = {key: data[key] for key in ("receipt_id", "proposal_id", "memory_id")}
            yield Event(tenant_id=receipt.tenant_id, type=events.MEMORY_FENCED, data=fenced)


@dataclass(frozen=True)
class ChainBreak:
    tenant_id: str
    seq: int
    receipt_id: str
    problem: str

    def __str__(self) -> str:
        return f"tenant {self.tenant_id}: receipt {self.receipt_id} (seq {self.seq}): {self.problem}"


def verify_chain_range(
    tenant_id: Any,
    first: int,
    last: int,
    *,
    on_progress: Callable[[int], None] | None = None,
    every: int = PROGRESS_EVERY,
) -> tuple[int, ChainBreak | None]:
    """Recompute receipts ``first``..``last`` of a chain; return how many verified and the first break.

    The range starts from the stored hash of receipt ``first - 1``, which the
    range before it verifies, so ranges can be checked independently.
    ``on_progress(n)`` hears of every ``every`` receipts verified, and of the rest at the end
    (it must pickle: ranges may run in other processes).
    """
    reported = 0
    if first == 1:
        expected_prev = Receipt.GENESIS_HASH
    else:
        expected_prev = (
            Receipt.objects.filter(tenant_id=tenant_id, seq=first - 1).values_list("hash", flat=True).first()
            or ""  # a missing predecessor: no stored hash can match it
        )
    expected_seq, count = first, 0
    for row in receipt_rows(tenant_id, first, last):
        problem = None
        if row["seq"] != expected_seq:
            problem = f"sequence gap: expected seq {expected_seq}"
        elif row["prev_hash"] != expected_prev:
            problem = "prev_hash does not match the previous receipt's hash"
        elif digest(Receipt.body_of(row)) != row["hash"]:
            problem = "hash does not match the receipt's contents (a column was changed)"
        if problem:
            _report(on_progress, count - reported)
            return count, ChainBreak(str(tenant_id), row["seq"], uuid_text(row["id"]), problem)
        expected_prev, expected_seq, count = row["hash"], row["seq"] + 1, count + 1
        if count - reported >= every:
            _report(on_progress, count - reported)
            reported = count
    _report(on_progress, count - reported)
    if expected_seq <= last:  # receipts stop before the range's end
        return count, ChainBreak(
            str(tenant_id), expected_seq, "-", f"sequence gap: expected seq {expected_seq}"
        )
    return count, None


def _report(on_progress: Callable[[int], None] | None, verified: int) -> None:
    if on_progress is not None and verified:
        on_progress(verified)


def head_problem(tenant_id: Any) -> str | None:
    """Compare the chain head with the last stored receipt: a removed tail or a forged head shows here."""
    head = ReceiptChain.objects.filter(tenant_id=tenant_id).first()
    claimed = (head.seq, head.head_hash) if head else (0, Receipt.GENESIS_HASH)
    stored = Receipt.objects.filter(tenant_id=tenant_id).order_by("-seq").values_list("seq", "hash").first()
    stored = stored or (0, Receipt.GENESIS_HASH)
    if claimed[0] != stored[0]:
        return f"tenant {tenant_id}: chain head says seq {claimed[0]}; receipts end at {stored[0]}"
    if claimed[1] != stored[1]:
        return f"tenant {tenant_id}: chain head's hash is not the hash of receipt {stored[0]}"
    return None


def receipt_rows(tenant_id: Any, first: int, last: int) -> Iterator[dict[str, Any]]:
    """Stream receipts in chain order as dicts (no model instance per row).

    Ids come as text from the database: the hash covers their text anyway,
    and parsing a million UUIDs only to print them again is a third of the work.
    SQLite spells them without dashes; ``Receipt.body_of`` puts the dashes back.
    """
    as_text = {f"{column}_text": Cast(column, TextField()) for column in Receipt.UUID_COLUMNS}
    columns = [f"{c}_text" if c in Receipt.UUID_COLUMNS else c for c in (*Receipt.BODY_COLUMNS, "hash")]
    rows = (
        Receipt.objects.filter(tenant_id=tenant_id, seq__gte=first, seq__lte=last)
        .annotate(**as_text)
        .order_by("seq")
        .values_list(*columns)
    )
    names = (*Receipt.BODY_COLUMNS, "hash")
    for values in rows.iterator(chunk_size=5000):
        yield dict(zip(names, values, strict=True))
