"""The only functions that write memories.

Only the executor may import this module (import-linter contract
"only the executor writes memories"); everyone else proposes.
Each function expects to run inside the executor's transaction with the
target row already locked, and saves through ``save()`` so simple-history
records the revision.
"""

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.history import history_statement
from core.inserts import insert_statement, run_together
from evidence.models import EvidenceRevision
from memory_core.embeddings import Vector, active_embedder, embedded_text, pack
from memory_core.lifecycle import next_state
from memory_core.models import (
    AccessEvent,
    AccessEventItem,
    Entity,
    Memory,
    MemoryEvidence,
    MemoryLineage,
    MemoryLink,
    MemoryVector,
)


def create_memory(
    *,
    memory_id: str,
    tenant_id: Any,
    fields: dict[str, Any],
    evidence: Iterable[EvidenceRevision],
    now: datetime,
    change_reason: str,
) -> Memory:
    """Create revision 1 of a memory with its evidence bindings."""
    memory = new_memory(memory_id=memory_id, tenant_id=tenant_id, fields=fields, now=now)
    create_memories([(memory, list(evidence), change_reason)])
    return memory


def new_memory(
    *,
    memory_id: Any,
    tenant_id: Any,
    fields: dict[str, Any],
    now: datetime,
    submitted: tuple[datetime, int] | None = None,
) -> Memory:
    """Build (unsaved) revision 1 of a memory from a create proposal's frozen fields.

    ``submitted`` is when the proposal was submitted and its position in that request:
    the episode order after ``occurred_at`` (``now`` when not given, as for a direct create).
    """
    submitted_at, submission_index = submitted or (now, 0)
    memory = Memory(
        id=memory_id,
        tenant_id=tenant_id,
        subject_kind=fields["subject"]["kind"],
        subject_id=fields["subject"]["id"],
        scope=fields["scope"],
        type=fields["type"],
        revision=1,
        created_at=now,
        updated_at=now,
        submitted_at=submitted_at,
        submission_index=submission_index,
    )
    _assign(memory, fields, now)
    memory.place_in_time()
    return memory


def create_memories(created: list[tuple[Memory, list[EvidenceRevision], str]]) -> None:
    """Insert new memories (from :func:`new_memory`), each with its evidence and change reason.

    Three statements for any number of memories, one on PostgreSQL (``core.inserts``): the rows,
    their history rows (copied by the database from the rows, with each memory's change reason)
    and their evidence links. This is the executor's bulk path for creates.
    """
    if not created:
        return
    for memory, evidence, _ in created:
        _rest_on(memory, evidence)
    memories = [memory for memory, _, _ in created]
    links = [link for memory, evidence, _ in created for link in _evidence_links(memory, evidence)]
    run_together(
        [
            insert_statement(memories, name="memory", returning="*"),
            history_statement(
                Memory,
                [memory.pk for memory in memories],
                history_type="+",
                when=timezone.now(),
                reasons={memory.pk: change_reason for memory, _, change_reason in created},
                inserted_by="memory",
            ),
            *([insert_statement(links)] if links else []),
        ]
    )


def update_memory(
    *,
    memory: Memory,
    changes: dict[str, Any],
    evidence: Iterable[EvidenceRevision],
    now: datetime,
    change_reason: str,
) -> Memory:
    """Apply ``changes`` as the memory's next revision (caller holds the row lock).

    A change of content supersedes what the memory said: the new revision is
    valid from now (unless the proposal says otherwise) and the previous
    revision's validity window is closed at now in history, not erased, so
    recall ``valid_at`` an earlier time still finds it.
    """
    superseded = memory.revision
    cited = list(evidence)
    _assign(memory, changes, now)
    _rest_on(memory, cited)
    if "content" in changes:
        memory.place_in_time()
    supersedes = "content" in changes and "valid_from" not in changes
    if supersedes:
        memory.valid_from = now
    memory.revision += 1
    memory.updated_at = now
    memory._change_reason = change_reason
    memory.save()
    if supersedes:
        Memory.history.filter(id=memory.id, revision=superseded).filter(
            Q(valid_to__isnull=True) | Q(valid_to__gt=now)
        ).update(valid_to=now)
    _bind_evidence(memory, cited)
    return memory


WITHDRAWN_SUMMARY = "(summary withdrawn: one of its sources was purged)"


def withdraw_superseded_summary(*, memory: Memory, revision: int) -> int:
    """Blank the content of a summary's ``revision`` in history, once a re-summary superseded it.

    That revision quoted a source since purged. The re-summary's receipt hashes the revision
    before it as history keeps it after the receipt (``before_memory_hash``), so the audit
    binds the blanked row. Return how many history rows were blanked.
    """
    return Memory.history.filter(id=memory.id, revision=revision).update(
        content={"statement": WITHDRAWN_SUMMARY}
    )


def _assign(memory: Memory, fields: dict[str, Any], now: datetime) -> None:
    """Copy proposed fields (JSON, datetimes as ISO strings) onto the row."""
    for name in Memory.CHANGEABLE_FIELDS:
        if name in fields:
            value = fields[name]
            if name in Memory.DATETIME_FIELDS and isinstance(value, str):
                value = parse_datetime(value)
            setattr(memory, name, value)
    if fields.get("ttl_seconds") and not fields.get("expires_at"):
        memory.expires_at = now + timedelta(seconds=fields["ttl_seconds"])


def _rest_on(memory: Memory, evidence: list[EvidenceRevision]) -> None:
    """Set the episode of the revision about to be written: the first source it rests on."""
    memory.episode = evidence[0].source_id if evidence else None


def _bind_evidence(memory: Memory, evidence: Iterable[EvidenceRevision]) -> None:
    MemoryEvidence.objects.bulk_create(_evidence_links(memory, evidence))


def _evidence_links(memory: Memory, evidence: Iterable[EvidenceRevision]) -> list[MemoryEvidence]:
    return [
        MemoryEvidence(
            tenant_id=memory.tenant_id,
            memory=memory,
            memory_revision=memory.revision,
            evidence_revision=revision,
            content_hash=revision.content_hash,
        )
        for revision in evidence
    ]


def change_state(*, memory: Memory, verb: str, reason: str, now: datetime, change_reason: str) -> Memory:
    """Move the locked memory along the lifecycle as its next revision (not for purge).

    The new revision rests on the same evidence as the one before: a state
    change asserts nothing new, and a memory fenced by invalidated evidence
    must still be fenced when it is restored.
    """
    memory.state = next_state(memory.state, verb)
    memory.state_reason = reason if verb != "restore" else ""
    memory.revision += 1
    memory.updated_at = now
    memory._change_reason = change_reason
    memory.save()
    carried = MemoryEvidence.objects.filter(memory=memory, memory_revision=memory.revision - 1)
    MemoryEvidence.objects.bulk_create(
        MemoryEvidence(
            tenant_id=link.tenant_id,
            memory=memory,
            memory_revision=memory.revision,
            evidence_revision_id=link.evidence_revision_id,
            content_hash=link.content_hash,
        )
        for link in carried
    )
    return memory


def write_vectors(memories: list[Memory]) -> int:
    """Embed the revision each memory is now at, with the active embedder; return how many were stored.

    The executor calls this once per batch, after the batch's writes, so
    embedding never sits on a submit's request path and a vector exists only
    for an applied revision. One embedder call and one insert for the batch;
    a revision that already has its vector (a fence changes no revision) is
    left as it is.
    """
    embedder = active_embedder()
    if not embedder.dimensions or not memories:
        return 0
    revisions = {memory.pk: memory for memory in memories}
    existing = set(
        MemoryVector.objects.filter(memory_id__in=revisions, embedder=embedder.name).values_list(
            "memory_id", "memory_revision"
        )
    )
    wanted = [memory for memory in revisions.values() if (memory.pk, memory.revision) not in existing]
    vectors = embedder.embed([embedded_text(memory.content) for memory in wanted])
    MemoryVector.objects.bulk_create(
        MemoryVector(
            tenant_id=memory.tenant_id,
            memory=memory,
            memory_revision=memory.revision,
            embedder=embedder.name,
            vector=pack(vector),
        )
        for memory, vector in zip(wanted, vectors, strict=True)
    )
    return len(wanted)


def current_revisions(revisions: list[tuple[Any, int]]) -> list[Memory]:
    """Return the memories still at the given revisions (read without a lock: for embedding)."""
    wanted = {(str(memory_id), revision) for memory_id, revision in revisions}
    memories = Memory.objects.filter(pk__in={memory_id for memory_id, _ in wanted}).order_by("pk")
    return [memory for memory in memories if (str(memory.pk), memory.revision) in wanted]


def store_vectors_if_current(memories: list[Memory], vectors: list[Vector], *, embedder: str) -> int:
    """Store each vector only if its memory is still at the revision it was computed from.

    Compare-and-swap on the revision under the row lock: an update or purge that
    committed since the text was read moved (or removed) the row, so its vector is
    dropped; one that comes later waits for this transaction, and a purge's cascade
    then removes the vector with the row. Return how many were stored.
    """
    computed = dict(zip(memories, vectors, strict=True))
    locked = dict(
        Memory.objects.select_for_update()
        .filter(pk__in=[memory.pk for memory in memories])
        .values_list("pk", "revision")
    )
    current = [memory for memory in computed if locked.get(memory.pk) == memory.revision]
    MemoryVector.objects.bulk_create(
        [
            MemoryVector(
                tenant_id=memory.tenant_id,
                memory_id=memory.pk,
                memory_revision=memory.revision,
                embedder=embedder,
                vector=pack(computed[memory]),
            )
            for memory in current
        ],
        ignore_conflicts=True,  # a redelivered task finds its vectors already there
    )
    return len(current)


def purge_memory(*, memory: Memory, verb: str = "purge") -> tuple[dict[str, int], list[Any]]:
    """Physically remove a deleted memory, its evidence links, vectors, lineage rows and every
    history row of it, and blank the query text of the searches that served it.

    Return how many rows of each class were removed or scrubbed (the purge receipt lists them),
    and the summaries the memory was a source of (their lineage rows to it are gone).
    Access events keep who read what and when, by id; subject ids are in them only as keyed digests.
    """
    next_state(memory.state, verb)
    summarised_in = MemoryLineage.objects.filter(tenant_id=memory.tenant_id, source=memory)
    successors = list(summarised_in.order_by("successor_id").values_list("successor_id", flat=True))
    lineage = summarised_in.delete()[0] + MemoryLineage.objects.filter(successor=memory).delete()[0]
    _, deleted = Memory.objects.filter(pk=memory.pk).delete()  # cascades to its evidence links and vectors
    # After the row: deleting it makes simple-history write one more ("-") history row.
    history_rows = Memory.history.filter(id=memory.id).delete()[0]
    served = AccessEventItem.objects.filter(tenant_id=memory.tenant_id, memory_id=memory.id)
    searches = AccessEvent.objects.filter(tenant_id=memory.tenant_id, pk__in=served.values("event_id"))
    return {
        "memory_core.Memory": deleted.get("memory_core.Memory", 0),
        "memory_core.MemoryLineage": lineage,
        "memory_core.MemoryEvidence": deleted.get("memory_core.MemoryEvidence", 0),
        "memory_core.MemoryVector": deleted.get("memory_core.MemoryVector", 0),
        "memory_core.HistoricalMemory": history_rows,
        "memory_core.AccessEvent": searches.exclude(query="").blank_queries(),
    }, successors


def create_link(
    *,
    source: Memory,
    target: Memory | None = None,
    target_entity: Entity | None = None,
    relation: str,
    evidence: dict,
    receipt_id: Any,
    now: datetime,
) -> MemoryLink:
    """Write one allowlisted link from a locked memory to a memory of its scope or to an entity."""
    return MemoryLink.objects.create(
        tenant_id=source.tenant_id,
        source=source,
        target=target,
        target_entity=target_entity,
        relation=relation,
        scope=source.scope,
        evidence=evidence,
        receipt_id=receipt_id,
        created_at=now,
    )


def create_entity(*, entity_id: Any, tenant_id: Any, fields: dict, receipt_id: Any, now: datetime) -> Entity:
    return Entity.objects.create(
        id=entity_id,
        tenant_id=tenant_id,
        kind=fields["kind"],
        name=fields["name"],
        aliases=fields["aliases"],
        receipt_id=receipt_id,
        created_at=now,
        updated_at=now,
    )


def redirect_entity(*, entity: Entity, into: Entity | None, receipt_id: Any, now: datetime) -> Entity:
    """Point ``entity`` at ``into`` (merge) or at nothing (unmerge); both rows always stay."""
    entity.redirect_to = into
    entity.receipt_id = receipt_id
    entity.updated_at = now
    entity.save(update_fields=["redirect_to", "receipt_id", "updated_at"])
    return entity


def compact_memories(
    *,
    successor_id: Any,
    tenant_id: Any,
    fields: dict[str, Any],
    evidence: Iterable[EvidenceRevision],
    sources: list[Memory],
    receipt_id: Any,
    now: datetime,
) -> Memory:
    """Create a compaction's successor (lineage to each locked source revision) and make the sources dormant.

    Nothing is deleted: each source keeps its content and evidence at a new,
    dormant revision, restorable like any dormant memory.
    """
    change_reason = f"receipt:{receipt_id}"
    successor = create_memory(
        memory_id=successor_id,
        tenant_id=tenant_id,
        fields=fields,
        evidence=evidence,
        now=now,
        change_reason=change_reason,
    )
    MemoryLineage.objects.bulk_create(
        MemoryLineage(
            tenant_id=tenant_id,
            successor=successor,
            source=source,
            source_revision=source.revision,
            receipt_id=receipt_id,
            created_at=now,
        )
        for source in sources
    )
    reason = f"compacted into {successor_id}"
    for source in sources:
        change_state(memory=source, verb="dormant", reason=reason, now=now, change_reason=change_reason)
    return successor
