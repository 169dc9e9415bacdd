"""Export a tenant as JSON Lines and import it back, verifying its receipt chain.

Every governed row is exported in dependency order with Django's ``jsonl``
serializer (people referenced by decisions or history go by username).
Every table whose rows refer to an exported row is either exported too
(``EXPORTED``) or left out for the reason ``NOT_EXPORTED`` gives; a test
walks the foreign keys so a new table cannot be forgotten. The file ends with
the tenant's receipt export embedded (``executor.offline``), so an auditor
verifies it offline with ``verify_export`` as they would the admin's. Tokens and object
permissions are not exported: operators issue and grant them again. An import
runs in one transaction and is refused, leaving nothing behind, if the tenant
exists or its receipt chain does not verify.
"""

import json
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import IO, Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core import serializers
from django.core.management.color import no_style
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import Model
from django.utils import timezone

from core.errors import DomainError
from evidence.models import EvidenceRevision, EvidenceSource
from executor.export import jsonl_items
from executor.models import Receipt, ReceiptChain, TenantExport
from executor.offline import EMBEDDED_LINE, TENANT_EXPORT_HEADER
from executor.verification import verify_tenant
from memory_core.models import (
    AccessEvent,
    AccessEventItem,
    Entity,
    Memory,
    MemoryEvidence,
    MemoryLineage,
    MemoryLink,
    MemoryReads,
    RecallFeedback,
)
from proposals.models import DreamingRun, OutboxEntry, Proposal, ProposalEvidence
from registrations.models import Registration
from reviews.models import ReviewDecision
from tenancy.models import Agent, Delegation, Tenant

# (model, how to select the tenant's rows), parents before children.
EXPORTED = [
    (Tenant, "pk"),
    (Agent, "tenant_id"),
    (Delegation, "tenant_id"),
    (Delegation.history.model, "tenant_id"),
    (EvidenceSource, "tenant_id"),
    (EvidenceRevision, "tenant_id"),
    (Registration, "tenant_id"),
    (Entity, "tenant_id"),  # a redirect may point at an entity later in the file: FKs are deferred
    (Memory, "tenant_id"),
    (Memory.history.model, "tenant_id"),
    (MemoryEvidence, "tenant_id"),
    (MemoryLineage, "tenant_id"),
    (MemoryLink, "tenant_id"),
    (MemoryReads, "tenant_id"),  # the activation the dormancy and compaction sweeps read
    (DreamingRun, "tenant_id"),  # before the proposals that belong to a run
    (Proposal, "tenant_id"),
    (Proposal.history.model, "tenant_id"),
    (ProposalEvidence, "tenant_id"),
    (ReviewDecision, "tenant_id"),
    (ReviewDecision.history.model, "tenant_id"),
    (OutboxEntry, "tenant_id"),
    (Receipt, "tenant_id"),
    (ReceiptChain, "tenant_id"),
    (AccessEvent, "tenant_id"),
    (AccessEventItem, "tenant_id"),
    (RecallFeedback, "tenant_id"),
    # MGP sits above the executor: its models by label, not by import.
    (apps.get_model("mgp", "MgpRecord"), "tenant_id"),  # a client's memory id, or MGP loses the memory
    (apps.get_model("mgp", "MgpEvent"), "tenant_id"),  # MGP's refusals and bulk reads: part of the audit
]
# Tables whose rows refer to an exported row but are not exported, and why.
NOT_EXPORTED = {
    "tenancy.AgentToken": "credentials: operators issue tokens again",
    "tenancy.DeniedRequest": "a throttle's counters, not history",
    "memory_core.MemoryVector": "derived from content: manage.py embed_memories rebuilds them",
    "memory_core.SearchCorpus": "search statistics, rebuilt by triggers as memories are imported",
    "memory_core.SearchTerm": "search statistics, rebuilt by triggers as memories are imported",
    "executor.ChainVerification": "a past run of verify now; the import verifies the chain itself",
    "executor.TenantExport": "which files left this database; the importing one records its own",
    "erasure.Erasure": "no table of its own: a proxy of proposals.Proposal, exported with the proposals",
    "mgp.MgpTask": "an async MGP call's state; a client asks again",
    "notifications.WebhookEndpoint": "receivers and their signing secrets: operators register them again",
    "notifications.WebhookDelivery": "messages to this deployment's receivers, not the tenant's history",
    "notifications.EmailDelivery": "messages to this deployment's reviewers, not the tenant's history",
}
USERNAMES = TENANT_EXPORT_HEADER


class ExactJSONEncoder(DjangoJSONEncoder):
    """Keep microseconds (Django's encoder drops them), or receipt and content hashes would not match."""

    def default(self, o: Any) -> Any:
        if isinstance(o, datetime):
            return o.isoformat()
        return super().default(o)


class ImportRefused(DomainError):
    code = "import_refused"
    status = 409
    title = "The export cannot be imported"


def export_tenant(
    tenant: Tenant,
    out: IO[str],
    progress: Callable[[str, int], None] = lambda *_: None,
    *,
    exported_by: str = "export_tenant",
) -> int:
    """Write the tenant's rows to ``out`` as JSON Lines; return how many rows were written.

    The export is recorded (``TenantExport``): an erasure names the exports that
    held what it removed, since a file cannot be called back.
    """
    usernames = sorted(
        set(ReviewDecision.objects.filter(tenant=tenant).values_list("actor__username", flat=True))
        | set(
            Agent.objects.filter(tenant=tenant, user__isnull=False).values_list("user__username", flat=True)
        )
        | set(
            Delegation.history.filter(tenant=tenant, history_user__isnull=False).values_list(
                "history_user__username", flat=True
            )
        )
        | set(
            Delegation.objects.filter(tenant=tenant, granted_by__isnull=False).values_list(
                "granted_by__username", flat=True
            )
        )
    )
    out.write(json.dumps({"model": USERNAMES, "fields": {"usernames": usernames}}) + "\n")
    written = 0
    for model, column in EXPORTED:
        rows = model.objects.filter(**{column: tenant.pk}).order_by("pk")
        count = 0
        for chunk in _chunks(rows.iterator(chunk_size=1000), 1000):
            out.write(
                serializers.serialize("jsonl", chunk, use_natural_foreign_keys=True, cls=ExactJSONEncoder)
            )
            count += len(chunk)
        progress(model._meta.label, count)
        written += count
    receipts = Receipt.objects.filter(tenant=tenant)
    for item in jsonl_items(receipts, exported_by=exported_by, filters=f"tenant={tenant.name}"):
        out.write(json.dumps({"model": EMBEDDED_LINE, "line": item}, cls=ExactJSONEncoder) + "\n")
    head = ReceiptChain.objects.filter(tenant=tenant).values_list("seq", flat=True).first() or 0
    TenantExport.objects.create(
        tenant=tenant, exported_at=timezone.now(), exported_by=exported_by, head_seq=head, rows=written
    )
    return written


@transaction.atomic
def import_tenant(lines: Iterable[str], progress: Callable[[str, int], None] = lambda *_: None) -> Tenant:
    """Load an export; refuse it (and keep nothing) if the tenant exists or its chain is broken."""
    lines = iter(lines)
    header = json.loads(next(lines))
    if header.get("model") != USERNAMES:
        raise ImportRefused("Not a Custodian tenant export")
    for username in header["fields"]["usernames"]:
        user, created = get_user_model().objects.get_or_create(username=username)
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
    tenant, deferred = None, []
    counts: dict[str, int] = {}
    rows = _current_field_names(lines)
    for item in serializers.deserialize("jsonl", rows, handle_forward_references=True):
        if isinstance(item.object, Tenant):
            if (
                Tenant.objects.filter(pk=item.object.pk).exists()
                or Tenant.objects.filter(name=item.object.name).exists()
            ):
                raise ImportRefused(f"Tenant {item.object.name} already exists")
            tenant = item.object
        item.save()  # raw save: no signals, no history rows, no append-only guard
        if item.deferred_fields:
            deferred.append(item)  # e.g. an outbox entry requeued as one exported after it
        label = item.object._meta.label
        counts[label] = counts.get(label, 0) + 1
    for item in deferred:
        item.save_deferred_fields()
    if tenant is None:
        raise ImportRefused("The export holds no tenant")
    _advance_sequences({model for model, _ in EXPORTED})
    verification = verify_tenant(tenant.pk)  # inside the import's transaction: runs here
    if not verification.ok:
        raise ImportRefused(f"Receipt chain does not verify: {verification.problems[0]}")
    for label, count in counts.items():
        progress(label, count)
    return tenant


# Fields renamed since exports began (model label, old name -> new name): an older export loads.
RENAMED_FIELDS = {
    "proposals.proposal": {"target_memory_id": "target_id"},
    "proposals.historicalproposal": {"target_memory_id": "target_id"},
}
_EMBEDDED_PREFIX = json.dumps({"model": EMBEDDED_LINE})[:-1]
_OLD_NAMES = tuple({f'"{old}"' for renames in RENAMED_FIELDS.values() for old in renames})


def _current_field_names(lines: Iterable[str]) -> Iterator[str]:
    """Each row line with its fields under their current names (a line naming none passes as is).

    The embedded receipt export is for offline verification; the import verifies the chain itself.
    """
    for line in lines:
        if line.startswith(_EMBEDDED_PREFIX):
            continue
        if any(old in line for old in _OLD_NAMES):
            row = json.loads(line)
            renames = RENAMED_FIELDS.get(row.get("model", ""), {})
            if renames:
                row["fields"] = {renames.get(name, name): value for name, value in row["fields"].items()}
                line = json.dumps(row) + "\n"
        yield line


def _advance_sequences(models: set[type[Model]]) -> None:
    """Move PostgreSQL's id sequences past the imported ids, so the next insert gets a fresh one.

    Rows were saved with the ids they had; the sequences of integer ids did not
    move, and in a fresh database the next access event or history row would
    collide with an imported one. SQLite needs nothing (it takes max(id) + 1).
    """
    ordered = sorted(models, key=lambda model: model._meta.label)
    statements = connection.ops.sequence_reset_sql(no_style(), ordered)
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def _chunks(rows: Iterator[Any], size: int) -> Iterator[list[Any]]:
    chunk = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
