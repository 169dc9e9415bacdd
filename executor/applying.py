"""The transaction that applies a batch of claimed outbox entries.

Rows are locked in one order (entries, proposals, memories, each by primary
key; the receipt chain heads last), so batches on two workers never
deadlock, and a chain head is held only for the bulk append at the end.
Each entry is still re-verified on its own; what is shared is the
round-trips: one query locks the batch's proposals, one its memories, one
reads its evidence, and creates (the commonest write), receipts and
proposal outcomes are written with bulk inserts.
"""

import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, cast

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from evidence.models import EvidenceRevision
from executor.authority import Authority, release_authorities
from executor.chain import append_receipts
from executor.dreaming import close_stale, window_member_ids, window_refusal
from executor.graph import entity_hash, link_hash
from executor.models import Receipt
from executor.records import bind_memory_rows
from memory_core.lifecycle import InvalidTransition, next_state
from memory_core.models import Entity, Memory
from memory_core.mutations import (
    change_state,
    compact_memories,
    create_entity,
    create_link,
    create_memories,
    new_memory,
    purge_memory,
    redirect_entity,
    update_memory,
    withdraw_superseded_summary,
    write_vectors,
)
from memory_core.signals import memory_purged
from proposals.gates import failed_gates
from proposals.kinds.compact import compaction_refusal
from proposals.kinds.entity import entity_create_refusal, entity_merge_refusal, entity_unmerge_refusal
from proposals.kinds.link import link_refusal
from proposals.models import DreamingRun, OutboxEntry, Proposal, ProposalEvidence
from proposals.services import escalate_to_review, record_executions, scrub_purged_content
from proposals.services.compaction_sweep import RESUMMARY_KEY, propose_resummaries
from registrations.activation import activate
from registrations.compiled import ActiveRegistration
from registrations.document import fingerprint
from registrations.evolution import breaking_changes
from registrations.models import Registration
from registrations.selectors import active_registration
from registrations.services import return_to_draft
from tenancy.models import Agent

Outcome = Receipt.Outcome


@dataclass(frozen=True)
class Check:
    outcome: str
    reason: str = ""
    decision_ids: list[str] = field(default_factory=list)


@dataclass
class _Writes:
    """What a batch writes in bulk once every entry in it has been decided."""

    created: list[tuple[Memory, list[EvidenceRevision], str]] = field(default_factory=list)
    executed: list[tuple[Proposal, str, bool]] = field(default_factory=list)
    receipts: list[dict[str, Any]] = field(default_factory=list)
    revised: list[Memory] = field(default_factory=list)  # the memories whose revision is embedded


@transaction.atomic(durable=True)
def apply_batch(entry_ids: list[Any], worker: dict[str, Any]) -> tuple[list[Receipt], list[Any]]:
    """Apply claimed entries exactly once; return their receipts and the ids left for the next batch.

    An entry whose memory an earlier entry of this batch already touched is
    left for the next batch, so it is verified against the committed row.
    """
    entries = list(
        OutboxEntry.objects.select_for_update()
        .filter(pk__in=entry_ids)
        .exclude(status__in=[OutboxEntry.Status.DONE, OutboxEntry.Status.DEAD])
        .order_by("pk")
    )
    proposals = {
        proposal.pk: proposal
        for proposal in Proposal.objects.select_for_update()
        .filter(pk__in=[entry.proposal_id for entry in entries])
        .order_by("pk")
    }
    runs = {
        run.pk: run
        for run in DreamingRun.objects.select_for_update()
        .filter(pk__in={p.dreaming_run_id for p in proposals.values() if p.dreaming_run_id})
        .order_by("pk")
    }
    wanted = _targets_and_key_holders(proposals.values()) | Q(pk__in=window_member_ids(runs))
    locked = list(Memory.objects.select_for_update().filter(wanted).order_by("pk"))
    memories = {memory.pk: memory for memory in locked}
    key_holders = defaultdict(list)
    for memory in locked:
        if memory.is_active and memory.dedupe_key:
            key_holders[(memory.tenant_id, memory.dedupe_key)].append(memory.pk)
    evidence = _evidence_by_proposal(list(proposals))
    authorities = release_authorities(list(proposals.values()))
    candidates = _candidates(proposals.values())
    registrations = {
        tenant_id: active_registration(tenant_id=tenant_id)
        for tenant_id in {proposal.tenant_id for proposal in proposals.values()}
    }
    writes, deferred = _Writes(), []
    touched: set[Any] = set()
    touched_keys: set[tuple[Any, str]] = set()
    touched_runs: set[Any] = set()  # one action of a run per batch: the next sees its committed receipt
    for entry in entries:
        proposal = proposals[entry.proposal_id]
        memory = memories.get(proposal.target_memory_id)
        if memory is not None and memory.tenant_id != proposal.tenant_id:
            memory = None  # another tenant's row is, for this proposal, no memory at all
        keys = {
            (proposal.tenant_id, proposal.claimed_dedupe_key),
            (proposal.tenant_id, getattr(memory, "dedupe_key", "")),
        }
        members = {pk: memories[pk] for pk in _member_ids(proposal) if pk in memories}
        moved = {proposal.target_memory_id, *_member_ids(proposal)}
        if moved & touched or keys & touched_keys or proposal.dreaming_run_id in touched_runs:
            deferred.append(entry.pk)
            continue
        if proposal.dreaming_run_id:
            touched_runs.add(proposal.dreaming_run_id)
        touched |= moved
        touched_keys |= {key for key in keys if key[1]}
        holders = [
            pk
            for pk in key_holders[(proposal.tenant_id, proposal.claimed_dedupe_key)]
            if pk != proposal.target_memory_id
        ]
        _apply_one(
            entry,
            proposal,
            memory,
            evidence[proposal.pk],
            authorities[proposal.pk],
            holders,
            worker,
            writes,
            _Registration(registrations[proposal.tenant_id], candidates.get(proposal.target_memory_id)),
            _Window(runs.get(proposal.dreaming_run_id) if proposal.dreaming_run_id else None, memories),
            members,
        )
    create_memories(writes.created)
    write_vectors(writes.revised)
    record_executions(writes.executed)
    bind_memory_rows(writes.receipts)
    receipts = append_receipts(writes.receipts)
    OutboxEntry.objects.filter(pk__in=[row["outbox_entry"].pk for row in writes.receipts]).update(
        status=OutboxEntry.Status.DONE, lease_expires_at=None, updated_at=timezone.now()
    )
    return receipts, deferred


def _targets_and_key_holders(proposals) -> Q:
    """The rows a batch locks: its target memories and the active memories holding the keys it claims."""
    wanted = Q(pk__in=[proposal.target_memory_id for proposal in proposals])
    members = [member for proposal in proposals for member in _member_ids(proposal)]
    if members:
        wanted |= Q(pk__in=members)
    claimed = defaultdict(set)
    for proposal in proposals:
        if proposal.claimed_dedupe_key:
            claimed[proposal.tenant_id].add(proposal.claimed_dedupe_key)
    for tenant_id, keys in claimed.items():
        wanted |= Q(tenant_id=tenant_id, dedupe_key__in=sorted(keys), state=Memory.State.ACTIVE)
    return wanted


def _member_ids(proposal: Proposal) -> list[uuid.UUID]:
    """The memories a compaction moves (none for any other action)."""
    if proposal.action != Proposal.Action.COMPACT:
        return []
    return [uuid.UUID(member["memory_id"]) for member in proposal.fields["members"]]


def _candidates(proposals) -> dict[Any, Registration]:
    """Lock the registration candidates the batch's publish proposals name (none: no query)."""
    wanted = [p.target_memory_id for p in proposals if p.action == Proposal.Action.REGISTER]
    if not wanted:
        return {}
    locked = Registration.objects.select_for_update().filter(pk__in=wanted).order_by("pk")
    return {candidate.pk: candidate for candidate in locked}


@dataclass(frozen=True)
class _Window:
    """The Dreaming run an entry belongs to (None: none) and the batch's locked memories."""

    run: DreamingRun | None
    memories: dict[Any, Memory]


@dataclass(frozen=True)
class _Registration:
    """The registration an entry runs under, and the candidate it publishes (register only)."""

    active: ActiveRegistration
    candidate: Registration | None = None


def _evidence_by_proposal(proposal_ids: list[Any]) -> dict[Any, list[EvidenceRevision]]:
    cited = defaultdict(list)
    links = ProposalEvidence.objects.filter(proposal_id__in=proposal_ids).select_related("evidence_revision")
    for link in links.order_by("pk"):
        cited[link.proposal_id].append(link.evidence_revision)
    return cited


def _apply_one(
    entry: OutboxEntry,
    proposal: Proposal,
    memory: Memory | None,
    evidence: list[EvidenceRevision],
    authority: Authority,
    key_holders: list[Any],
    worker: dict[str, Any],
    writes: _Writes,
    registration: _Registration,
    window: _Window,
    members: dict[Any, Memory],
) -> None:
    before = (memory.revision, memory.content_hash) if memory else (None, "")
    check = _verify(entry, proposal, memory, evidence, authority, key_holders, registration, window, members)
    receipt_id = uuid.uuid4()
    effects: dict = {}
    if check.outcome == Outcome.APPLIED and proposal.action == Proposal.Action.REGISTER:
        effects = _publish(proposal, registration, receipt_id)
        writes.executed.append((proposal, check.outcome, True))
    elif check.outcome == Outcome.APPLIED and proposal.action in Proposal.ENTITY_ACTIONS:
        effects = _entity(proposal, receipt_id)
        writes.executed.append((proposal, check.outcome, True))
    elif check.outcome == Outcome.APPLIED and proposal.action == Proposal.Action.COMPACT:
        memory, effects = _compact(proposal, members, evidence, registration.active, receipt_id, writes)
        writes.executed.append((proposal, check.outcome, True))
    elif check.outcome == Outcome.APPLIED and proposal.action == Proposal.Action.LINK:
        assert memory is not None  # _check_target refused a missing source
        effects = _link(proposal, memory, receipt_id)
        writes.executed.append((proposal, check.outcome, True))
    elif check.outcome == Outcome.APPLIED:
        memory, effects = _write(proposal, memory, evidence, f"receipt:{receipt_id}", writes)
        writes.executed.append((proposal, check.outcome, True))
        if memory is not None:
            writes.revised.append(memory)
    elif check.outcome == Outcome.GATE_FAILED:
        escalate_to_review(proposal, failed_gates=check.reason.split(","))
    elif proposal.action == Proposal.Action.REGISTER and proposal.status == Proposal.Status.RELEASED:
        return_to_draft(candidate_id=proposal.target_memory_id)  # not published: the operator may retry
        writes.executed.append((proposal, check.outcome, False))
    elif proposal.status == Proposal.Status.RELEASED:
        writes.executed.append((proposal, check.outcome, False))
    if proposal.action == Proposal.Action.COMPACT and check.outcome != Outcome.APPLIED:
        effects = {"compaction": {"written": False, "members": proposal.fields["members"]}}
    after = (memory.revision, memory.content_hash) if memory else (None, "")
    writes.receipts.append(
        {
            "id": receipt_id,
            "tenant_id": proposal.tenant_id,
            "proposal": proposal,
            "outbox_entry": entry,
            "outcome": check.outcome,
            "reason": check.reason,
            "memory_id": proposal.target_memory_id,
            "before_revision": before[0],
            "before_content_hash": before[1],
            "after_revision": after[0],
            "after_content_hash": after[1],
            "action_digest": entry.action_digest,
            "evidence": proposal.evidence,
            "decision_ids": check.decision_ids,
            "effects": effects,
            "policy_fingerprint": proposal.policy_fingerprint,
            "registration_version": registration.active.version,
            "executor": worker,
        }
    )


def _verify(
    entry: OutboxEntry,
    proposal: Proposal,
    memory: Memory | None,
    evidence: list[EvidenceRevision],
    authority: Authority,
    key_holders: list[Any],
    registration: _Registration,
    window: _Window,
    members: dict[Any, Memory],
) -> Check:
    """Re-check everything the verdict rested on; the first failure decides the outcome."""
    if proposal.status == Proposal.Status.WITHDRAWN:
        return Check(Outcome.WITHDRAWN, "withdrawn by the agent before execution")
    if proposal.status == Proposal.Status.BLOCKED_EVIDENCE:
        return Check(Outcome.EVIDENCE_INVALID, "blocked: it cites evidence that was invalidated")
    if proposal.status != Proposal.Status.RELEASED:
        return Check(Outcome.STALE, f"proposal is {proposal.status}, not released")
    recomputed = proposal.compute_action_digest()
    if not (recomputed == proposal.action_digest == entry.action_digest):
        return Check(Outcome.DIGEST_MISMATCH, "the frozen action changed after release")
    if not authority.allowed:  # executor/authority.py: sealed verdict, valid approvals now
        return Check(authority.outcome, authority.reason)
    moved_by_run: frozenset[str] = frozenset()
    if window.run is not None:  # a Dreaming action: its whole frozen window must still hold
        stale, moved_by_run = window_refusal(window.run, window.memories)
        if stale:
            if not window.run.closed:
                close_stale(window.run, stale)
            return Check(Outcome.STALE, stale)
    if proposal.classification == Proposal.Classification.POLICY_GATED:
        failed = failed_gates(proposal, memory=memory)
        if failed:
            return Check(Outcome.GATE_FAILED, ",".join(failed))
    if proposal.action == Proposal.Action.REGISTER:
        refusal = _check_candidate(proposal, registration)
        return refusal or Check(Outcome.APPLIED, decision_ids=authority.decision_ids)
    if proposal.action == Proposal.Action.COMPACT:
        refusal = _check_evidence(evidence) or _check_target(proposal, memory)
        if refusal is None and (why := compaction_refusal(proposal, members)):
            refusal = Check(Outcome.STALE, why)
        return refusal or Check(Outcome.APPLIED, decision_ids=authority.decision_ids)
    if proposal.action in Proposal.ENTITY_ACTIONS:
        refusal = _check_evidence(evidence)
        entity_refusal = {
            Proposal.Action.ENTITY_CREATE: entity_create_refusal,
            Proposal.Action.ENTITY_MERGE: entity_merge_refusal,
            Proposal.Action.ENTITY_UNMERGE: entity_unmerge_refusal,
        }[Proposal.Action(proposal.action)]
        if refusal is None and (why := entity_refusal(proposal)):
            refusal = Check(Outcome.STALE, why)
        return refusal or Check(Outcome.APPLIED, decision_ids=authority.decision_ids)
    refusal = (
        _check_evidence(evidence)
        or _check_target(proposal, memory)
        or _check_content(proposal, memory, registration.active)
        or _check_dedupe_key(key_holders)
        or _check_link(proposal, memory, registration.active, moved_by_run)
    )
    return refusal or Check(Outcome.APPLIED, decision_ids=authority.decision_ids)


def _check_content(proposal: Proposal, memory: Memory | None, active: ActiveRegistration) -> Check | None:
    """The content must still match the registered schema of its type (the registration may have changed)."""
    if proposal.action not in (Proposal.Action.CREATE, Proposal.Action.UPDATE):
        return None
    result = proposal.fields if memory is None else {**memory.snapshot(), **proposal.fields}
    problems = active.content_problems(result["type"], result["content"])
    if not problems:
        return None
    where = ", ".join(f"{problem['path']} ({problem['kind']})" for problem in problems[:5])
    return Check(
        Outcome.CONTENT_INVALID,
        f"content no longer matches registration v{active.version} "
        f"(submitted under v{proposal.registration_version}): {where}",
    )


def _check_candidate(proposal: Proposal, registration: _Registration) -> Check | None:
    """Publish only the exact candidate reviewed, on the version it extends, if still additive."""
    candidate, active = registration.candidate, registration.active
    if candidate is None or candidate.tenant_id != proposal.tenant_id:
        return Check(Outcome.STALE, "the registration candidate no longer exists")
    if candidate.status != Registration.Status.REQUESTED:
        return Check(Outcome.STALE, f"the registration candidate is {candidate.status}")
    frozen = proposal.fields["fingerprint"]
    if not (fingerprint(candidate.document) == candidate.fingerprint == frozen):
        return Check(Outcome.DIGEST_MISMATCH, "the registration candidate changed after it was reviewed")
    if active.version != proposal.fields["base_version"]:
        return Check(
            Outcome.STALE,
            f"candidate extends v{proposal.fields['base_version']}, active is v{active.version}",
        )
    changes = breaking_changes(active.document, candidate.document)
    if changes:
        named = ", ".join(f"{change.path} {change.kind}" for change in changes[:5])
        return Check(Outcome.STALE, f"the candidate is not additive: {named}")
    return None


def _publish(proposal: Proposal, registration: _Registration, receipt_id: Any) -> dict:
    assert registration.candidate is not None  # _check_candidate refused a missing one
    previous = activate(
        candidate=registration.candidate, version=proposal.fields["version"], receipt_id=receipt_id
    )
    return {
        "registration": {
            "published_version": proposal.fields["version"],
            "fingerprint": proposal.fields["fingerprint"],
            "superseded_version": previous.version if previous else registration.active.version,
        }
    }


def _check_evidence(evidence: list[EvidenceRevision]) -> Check | None:
    invalid = next((rev for rev in evidence if rev.status != EvidenceRevision.Status.VALID), None)
    if invalid is None:
        return None
    return Check(
        Outcome.EVIDENCE_INVALID, f"evidence {invalid.source_id}@{invalid.revision} is {invalid.status}"
    )


def _check_target(proposal: Proposal, memory: Memory | None) -> Check | None:
    """Compare-and-swap: the memory must be exactly where the proposal left it."""
    if proposal.action in (Proposal.Action.CREATE, Proposal.Action.COMPACT):
        return Check(Outcome.STALE, "memory already exists") if memory is not None else None
    if memory is None:
        return Check(Outcome.STALE, "memory no longer exists")
    if memory.revision != proposal.base_revision:
        return Check(Outcome.STALE, f"base revision {proposal.base_revision}, memory is at {memory.revision}")
    if proposal.is_lifecycle:
        try:
            next_state(memory.state, proposal.action)
        except InvalidTransition as refusal:
            return Check(Outcome.STALE, refusal.detail)
    elif proposal.action == Proposal.Action.FENCE:
        return None  # a fence records a fact about any memory that still exists
    elif not memory.is_active:
        return Check(Outcome.STALE, f"memory is {memory.state}")
    return None


def _check_link(
    proposal: Proposal, memory: Memory | None, active: ActiveRegistration, moved_by_run: frozenset[str]
) -> Check | None:
    """A link's other end, relation and both ends' evidence must be as frozen (linking.link_refusal).

    A Dreaming merge's lineage link may land after its duplicate went dormant
    by the same run (``moved_by_run``): the window check vouched for that move.
    """
    if proposal.action != Proposal.Action.LINK or memory is None:
        return None
    refusal = link_refusal(proposal, memory, active, moved_by_run=moved_by_run)
    return Check(Outcome.STALE, refusal) if refusal else None


def _link(proposal: Proposal, source: Memory, receipt_id: Any) -> dict:
    """Write the link (its other end locked by ``link_refusal``); the receipt binds the row's hash."""
    fields, target, entity = proposal.fields, None, None
    if "to_entity_id" in fields:
        entity = Entity.objects.get(tenant_id=proposal.tenant_id, pk=fields["to_entity_id"])
    else:
        target = Memory.objects.get(tenant_id=proposal.tenant_id, pk=fields["to_memory_id"])
    link = create_link(
        source=source,
        target=target,
        target_entity=entity,
        relation=fields["relation"],
        evidence=fields["evidence"],
        receipt_id=receipt_id,
        now=timezone.now(),
    )
    other = (
        {"to_entity_id": str(link.target_entity_id)}
        if link.target_entity_id
        else {"to_memory_id": str(link.target_id)}
    )
    return {
        "linked": {
            "link_id": str(link.pk),
            "source_id": str(source.pk),
            "relation": link.relation,
            **other,
            "row_hash": link_hash(link),
        }
    }


def _compact(
    proposal: Proposal,
    members: dict[Any, Memory],
    evidence: list[EvidenceRevision],
    active: ActiveRegistration,
    receipt_id: Any,
    writes: _Writes,
) -> tuple[Memory, dict]:
    """Create the successor with its lineage and evidence union; make every member dormant.

    The receipt lists each member with the revision it left (its memory hashes
    are bound with the receipt's, ``executor.records.bind_memory_rows``).
    """
    fields = proposal.fields
    sources = [members[uuid.UUID(member["memory_id"])] for member in fields["members"]]
    successor = compact_memories(
        successor_id=proposal.target_memory_id,
        tenant_id=proposal.tenant_id,
        fields=fields["memory"],
        evidence=evidence,
        sources=sources,
        reason=f"compacted into {proposal.target_memory_id}",
        receipt_id=receipt_id,
        now=timezone.now(),
    )
    writes.revised.extend([successor, *sources])
    return successor, {
        "compaction": {
            "written": True,
            "successor": str(successor.pk),
            "summariser": fields["summariser"],
            # Importance is registered per type (activation.importance): the successor, of the
            # members' type, carries the highest (the only) importance any member had.
            "importance": active.entry(successor.type)["activation"]["importance"],
            "members": [
                {
                    "memory_id": str(source.pk),
                    "revision": source.revision - 1,
                    "after_revision": source.revision,
                }
                for source in sources
            ],
        }
    }


def _entity(proposal: Proposal, receipt_id: Any) -> dict:
    """Create an entity, or redirect one into another (merge) or back to itself (unmerge)."""
    fields, now = proposal.fields, timezone.now()
    if proposal.action == Proposal.Action.ENTITY_CREATE:
        entity = create_entity(
            entity_id=proposal.target_memory_id,
            tenant_id=proposal.tenant_id,
            fields=fields,
            receipt_id=receipt_id,
            now=now,
        )
        return {"entity": {"created": str(entity.pk), "kind": entity.kind, "row_hash": entity_hash(entity)}}
    entity = Entity.objects.get(tenant_id=proposal.tenant_id, pk=fields["entity_id"])
    into = None
    if proposal.action == Proposal.Action.ENTITY_MERGE:
        into = Entity.objects.get(tenant_id=proposal.tenant_id, pk=fields["into_entity_id"])
    redirect_entity(entity=entity, into=into, receipt_id=receipt_id, now=now)
    return {
        "entity": {
            "redirected": str(entity.pk),
            "to": str(into.pk) if into else None,
            "row_hash": entity_hash(entity),
        }
    }


def _check_dedupe_key(key_holders: list[Any]) -> Check | None:
    """One active memory per dedupe key: the database's partial unique index backs this up."""
    if not key_holders:
        return None
    held_by = ", ".join(str(pk) for pk in key_holders)
    return Check(
        Outcome.DEDUPE_CONFLICT,
        f"dedupe key is held by active memory {held_by}: propose an update of it, or retire it first",
    )


def _write(
    proposal: Proposal,
    memory: Memory | None,
    evidence: list[EvidenceRevision],
    change_reason: str,
    writes: _Writes,
) -> tuple[Memory | None, dict]:
    """Apply the frozen action; return the memory as it now is (None once purged) and the effects.

    A create is only built here; the batch inserts all of them at the end.
    """
    now = timezone.now()
    if proposal.action == Proposal.Action.CREATE:
        memory = new_memory(
            memory_id=proposal.target_memory_id, tenant_id=proposal.tenant_id, fields=proposal.fields, now=now
        )
        writes.created.append((memory, evidence, change_reason))
        return memory, {}
    assert memory is not None  # _check_target refused every other action on a missing memory
    if proposal.action == Proposal.Action.PURGE:
        removed, successors = purge_memory(memory=memory)
        removed.update(scrub_purged_content(purge=proposal, memory=memory, summaries=successors))
        for _, counts in memory_purged.send(Memory, tenant_id=memory.tenant_id, memory_ids=[memory.pk]):
            removed.update(cast(dict[str, int], counts or {}))
        effects: dict[str, Any] = {"purged": removed}
        if successors:  # summaries it was a source of: re-proposed without it, in this transaction
            resummaries = propose_resummaries(purge=proposal, successor_ids=successors)
            effects["resummarised"] = [
                {"memory_id": str(p.target_memory_id), "proposal_id": str(p.pk)} for p in resummaries
            ]
        return None, effects
    if proposal.action == Proposal.Action.FENCE:
        return memory, {"fenced": proposal.fields["reason"]}
    if proposal.is_lifecycle:
        memory = change_state(
            memory=memory,
            verb=proposal.action,
            reason=proposal.fields["reason"],
            now=now,
            change_reason=change_reason,
        )
        return memory, {}
    changes = {} if proposal.action == Proposal.Action.REVALIDATE else proposal.fields
    memory = update_memory(
        memory=memory, changes=changes, evidence=evidence, now=now, change_reason=change_reason
    )
    if proposal.action == Proposal.Action.REVALIDATE:
        return memory, {"unfenced": proposal.fields["reason"]}
    if _is_resummary(proposal):
        withdrawn = withdraw_superseded_summary(memory=memory, revision=proposal.base_revision)
        return memory, {"withdrawn": {"revision": proposal.base_revision, "history_rows": withdrawn}}
    return memory, {}


def _is_resummary(proposal: Proposal) -> bool:
    """True for the system agent's re-summary after a purge (an agent's key alone proves nothing)."""
    return (
        proposal.action == Proposal.Action.UPDATE
        and proposal.idempotency_key.startswith(RESUMMARY_KEY)
        and Agent.objects.filter(pk=proposal.submitted_by_id, is_system=True).exists()
    )
