"""Receipt exports for an external audit: CSV for people, JSON Lines with the chain segment to verify offline.

Both stream: receipts are read in keyset batches, so memory stays flat
whatever the size of the set. The selected set is whatever the admin's
receipt list shows the viewer (its filters and the viewer's tenant lines);
a tenant appears in an export only if one of its receipts is selected.

The JSON Lines format and what verifying it proves are described in
``executor.offline``, the verifier. For each tenant the export carries the
full segment from the first selected receipt to the later of the last
selected one and the last signed checkpoint, every body in full.
"""

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Max, Min, Q, QuerySet
from django.utils import timezone

from executor.chain import receipt_rows
from executor.checkpoints import public_key_text
from executor.models import Receipt, ReceiptChain
from executor.offline import FORMAT
from executor.presenters import attach_page

BATCH = 1000
CSV_COLUMNS = [
    "receipt_id",
    "tenant",
    "seq",
    "created_at",
    "outcome",
    "action",
    "memory_type",
    "memory_id",
    "before_revision",
    "after_revision",
    "summary",
    "proposed_by",
    "decided_by",
    "evidence",
    "hash",
    "prev_hash",
]


@dataclass(frozen=True)
class Segment:
    tenant_id: Any
    tenant: str
    first_seq: int
    last_seq: int
    selected: int
    checkpoint: dict[str, Any] | None


def segments(selected: QuerySet[Receipt]) -> list[Segment]:
    """Plan one segment per tenant of the selected receipts (two queries)."""
    spans = list(
        selected.order_by()
        .values("tenant_id", "tenant__name")
        .annotate(first=Min("seq"), last=Max("seq"), count=Count("pk"))
        .order_by("tenant__name")
    )
    heads = {
        str(chain.tenant_id): chain.checkpoint
        for chain in ReceiptChain.objects.filter(tenant_id__in=[span["tenant_id"] for span in spans])
    }
    plans = []
    for span in spans:
        checkpoint = heads.get(str(span["tenant_id"]))
        last = span["last"]
        if checkpoint and checkpoint["seq"] >= span["first"]:
            last = max(last, checkpoint["seq"])  # full bodies up to the signed head chain the selection to it
        plans.append(
            Segment(span["tenant_id"], span["tenant__name"], span["first"], last, span["count"], checkpoint)
        )
    return plans


def jsonl_lines(selected: QuerySet[Receipt], *, exported_by: str, filters: str) -> Iterator[str]:
    """Yield the JSON Lines export of ``selected``: header, per tenant a segment and its receipts, end."""
    for item in jsonl_items(selected, exported_by=exported_by, filters=filters):
        yield _line(item)


def jsonl_items(selected: QuerySet[Receipt], *, exported_by: str, filters: str) -> Iterator[dict[str, Any]]:
    """The export's lines as objects (a tenant export embeds them, ``executor.transfer``)."""
    plans = segments(selected)
    key = public_key_text()
    yield (
        {
            "kind": "export",
            "format": FORMAT,
            "exported_at": timezone.now().isoformat(),
            "exported_by": exported_by,
            "filters": filters,
            "hashing": "SHA-256 of the RFC 8785 canonical JSON of body",
            "verify": "bin/verify-export FILE --public-key KEY  (or: manage.py verify_export FILE)",
        }
    )
    count = 0
    for plan in plans:
        yield (
            {
                "kind": "segment",
                "tenant_id": str(plan.tenant_id),
                "tenant": plan.tenant,
                "first_seq": plan.first_seq,
                "last_seq": plan.last_seq,
                "selected": plan.selected,
                "checkpoint": plan.checkpoint,
                "public_key": key,
            }
        )
        for first in range(plan.first_seq, plan.last_seq + 1, BATCH):
            last = min(first + BATCH - 1, plan.last_seq)
            chosen = set(
                selected.filter(tenant_id=plan.tenant_id, seq__gte=first, seq__lte=last)
                .order_by()
                .values_list("seq", flat=True)
            )
            for row in receipt_rows(plan.tenant_id, first, last):
                count += 1
                body = Receipt.body_of(row)
                yield {"kind": "receipt", "selected": row["seq"] in chosen, "hash": row["hash"], "body": body}
    yield {"kind": "end", "tenants": len(plans), "receipts": count}


def csv_lines(selected: QuerySet[Receipt]) -> Iterator[str]:
    """Yield the CSV export of ``selected``, one row per receipt, summaries through the read policy."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    writer.writerow(CSV_COLUMNS)
    yield flush()
    ordered = selected.select_related("tenant", "proposal__submitted_by").order_by("tenant_id", "seq")
    after: tuple[Any, int] | None = None
    while True:
        page = ordered
        if after is not None:
            page = page.filter(Q(tenant_id__gt=after[0]) | Q(tenant_id=after[0], seq__gt=after[1]))
        batch = attach_page(page[:BATCH])
        if not batch:
            return
        for receipt in batch:
            writer.writerow([_cell(value) for value in _csv_row(receipt)])
        yield flush()
        after = (batch[-1].tenant_id, batch[-1].seq)


def _csv_row(receipt: Receipt) -> list[Any]:
    proposal = receipt.proposal
    summary = receipt.summary
    return [
        receipt.pk,
        receipt.tenant.name,
        receipt.seq,
        receipt.created_at.isoformat(),
        receipt.outcome,
        proposal.action,
        proposal.memory_type,
        receipt.memory_id,
        receipt.before_revision,
        receipt.after_revision,
        f"(content withheld: {summary.withheld})" if summary.withheld else summary.text,
        proposal.submitted_by.name,
        "; ".join(f"{d.actor.get_username()}: {d.decision}: {d.reason}" for d in receipt.decisions),
        " ".join(f"{item['evidence_id']}@{item['revision']}" for item in receipt.evidence),
        receipt.hash,
        receipt.prev_hash,
    ]


def _cell(value: Any) -> Any:
    """Keep a spreadsheet from running a cell as a formula (text from agents and people lands here)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _line(item: dict[str, Any]) -> str:
    return json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n"
