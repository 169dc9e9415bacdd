"""``compact``, capacity compaction, source-preserving: freeze a plan, let the executor re-check it.

When a subject+scope+type holds more active memories than its type's
registered ``capacity.per_subject_scope``, the sweep proposes one
``compact``: a new successor memory whose content the summariser writes from
the lowest-activation members, ``derived_from`` each member's exact revision,
bound to the union of their evidence; the members move to ``dormant``
(restorable), nothing is deleted. Enough members are chosen that the group is
back at capacity with the successor counting as one.

The plan is frozen in the proposal (members and revisions, successor content)
and its digest is the idempotency key, so a repeated sweep proposes it once.
The executor re-checks every member (``compaction_refusal``): one that moved
makes the whole compaction a zero-write ``stale`` receipt.

Purging a source removes its lineage row; the executor then proposes, in the
purge's own transaction, an ``update`` of each successor re-summarised from
the sources that remain (``propose_resummaries``), or an ``expire`` when none
remain. Only the system agent proposes either; agents cannot propose
``compact`` (not an API verb, and ``deny-agent-compaction`` if they reach the
service).
"""

import uuid
from typing import Any

from core.errors import DomainError
from evidence.models import EvidenceRevision
from memory_core.content import validate_content
from memory_core.models import Memory, MemoryEvidence
from proposals.errors import BaseRevisionStale
from proposals.kinds.base import Freezing, Prepared
from proposals.models import Proposal
from proposals.payloads import ProposalPayload
from proposals.policy.transition import SENSITIVITY_RANK

MAX_MEMBERS = 500  # one compaction's members (one proposal, one receipt, one transaction)


class CompactionInvalid(DomainError):
    code = "compaction_invalid"
    status = 422
    title = "The compaction plan does not fit the memories as they are"


# --- freezing -------------------------------------------------------------------------------


def member_evidence(tenant_id: Any, payload: ProposalPayload) -> list[dict[str, Any]]:
    """The union of the members' current evidence bindings (the successor is bound to all of them).

    Computed by the server from the members, never taken from the payload.
    """
    members = payload["compaction"]["members"]
    current = Memory.objects.filter(tenant_id=tenant_id, pk__in=[m["memory_id"] for m in members])
    revisions = {memory.pk: memory.revision for memory in current.only("id", "revision")}
    links = MemoryEvidence.objects.filter(tenant_id=tenant_id, memory_id__in=revisions).select_related(
        "evidence_revision"
    )
    bindings = {
        link.evidence_revision_id: link.evidence_revision.binding()
        for link in links
        if revisions[link.memory_id] == link.memory_revision
    }
    return [dict(binding) for binding in bindings.values()]


def prepare_compact(freezing: Freezing) -> Prepared:
    """Freeze the plan on ``proposal.fields``; the result is the successor's fields."""
    proposal, payload, tenant_id = freezing.proposal, freezing.payload, freezing.tenant_id
    spec = payload["compaction"]
    frozen: list[dict[str, Any]] = sorted(
        ({"memory_id": str(m["memory_id"]), "revision": int(m["revision"])} for m in spec["members"]),
        key=lambda m: m["memory_id"],
    )
    if len({m["memory_id"] for m in frozen}) != len(frozen) or not 2 <= len(frozen) <= MAX_MEMBERS:
        raise CompactionInvalid(f"a compaction has 2 to {MAX_MEMBERS} distinct members")
    rows = {
        str(memory.pk): memory
        for memory in Memory.objects.with_fence().filter(
            tenant_id=tenant_id, pk__in=[m["memory_id"] for m in frozen]
        )
    }
    group = {"subject": dict(spec["subject"]), "scope": spec["scope"], "type": spec["type"]}
    for member in frozen:
        memory = rows.get(member["memory_id"])
        if memory is None:  # another tenant's memory reads as missing
            raise CompactionInvalid("a member is not a memory of this tenant", memory_id=member["memory_id"])
        if memory.revision != member["revision"]:
            raise BaseRevisionStale(current_revision=memory.revision)
        if problem := _member_problem(memory, group):
            raise CompactionInvalid(problem, memory_id=member["memory_id"])
    members = [rows[m["memory_id"]] for m in frozen]
    validate_content(group["type"], spec["content"], freezing.registration)
    successor = {
        **Memory.optional_field_defaults(),
        **group,
        "content": spec["content"],
        "sensitivity": max((m.sensitivity for m in members), key=SENSITIVITY_RANK.__getitem__),
        "confidence": min(m.confidence for m in members),
        "retention_policy": Memory.RetentionPolicy.PERSISTENT.value,
    }
    proposal.target_id = proposal.target_id or uuid.uuid4()
    proposal.base_revision = 0
    proposal.fields = {
        "memory": successor,
        "members": frozen,
        "summariser": spec.get("summariser", ""),
        "reason": payload.get("reason", ""),
    }
    return Prepared("new", successor)


def _member_problem(memory: Memory, group: dict[str, Any]) -> str | None:
    """Why this memory cannot be a member of this group's compaction (None: it can)."""
    if not memory.is_active:
        return f"member is {memory.state}"
    if memory.is_fenced:
        return "member rests on invalidated evidence"
    if (memory.type, memory.scope) != (group["type"], group["scope"]) or {
        "kind": memory.subject_kind,
        "id": memory.subject_id,
    } != group["subject"]:
        return "members share one subject, scope and type"
    if memory.expires_at is not None or memory.retention_policy != Memory.RetentionPolicy.PERSISTENT:
        return "only persistent memories without expiry are compacted (a summary must not outlive them)"
    return None


# --- the executor's re-check ---------------------------------------------------------------


def compaction_refusal(proposal: Proposal, locked: dict[Any, Memory]) -> str | None:
    """Why the executor must not apply this compaction now (None: apply it).

    ``locked`` holds the members the executor locked; each must still be
    active, unfenced and at the revision the plan froze, or nothing is written.
    """
    group = {key: proposal.fields["memory"][key] for key in ("subject", "scope", "type")}
    changed = []
    fenced = set(
        MemoryEvidence.objects.filter(
            memory_id__in=list(locked),
            evidence_revision__status=EvidenceRevision.Status.INVALIDATED,
        ).values_list("memory_id", "memory_revision")
    )
    for member in proposal.fields["members"]:
        memory = locked.get(uuid.UUID(member["memory_id"]))
        if memory is None or memory.tenant_id != proposal.tenant_id:
            changed.append(f"{member['memory_id']} no longer exists")
        elif memory.revision != member["revision"]:
            changed.append(f"{memory.pk} is at revision {memory.revision}, not {member['revision']}")
        elif (memory.pk, memory.revision) in fenced:
            changed.append(f"{memory.pk} rests on invalidated evidence")
        elif problem := _member_problem(memory, group):
            changed.append(f"{memory.pk}: {problem}")
    if changed:
        return "members changed since the plan was frozen: " + "; ".join(changed[:10])
    return None
