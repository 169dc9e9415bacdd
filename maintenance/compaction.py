"""The compaction sweep and the re-summary after a purge (see ``proposals.kinds.compact``)."""

import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q
from django.utils import timezone

from core.canonical import digest
from core.errors import DomainError
from evidence.models import EvidenceRevision
from maintenance.dormancy import level_at
from memory_core.models import Memory, MemoryEvidence, MemoryReads
from memory_core.summaries import active_summariser
from proposals.kinds.compact import MAX_MEMBERS
from proposals.models import Proposal
from proposals.payloads import ProposalPayload
from proposals.services.submission import create_proposal, submit_proposal
from registrations.selectors import active_registration
from tenancy.models import Tenant
from tenancy.services import system_agent

logger = logging.getLogger(__name__)

# --- the sweep ---------------------------------------------------------------------------------


def propose_compactions(
    *, limit: int = 100, scan: int = 2000, now: datetime | None = None, tenant_id=None
) -> int:
    """Propose at most ``limit`` compactions (of one tenant, if named); return how many were new.

    Per tenant and type with a capacity: one aggregate query (``memory_capacity_idx``)
    finds the subject+scope groups over it, largest first; each group costs one
    read of its members and one of their uses.
    """
    now = now or timezone.now()
    proposed = 0
    tenants = Tenant.objects.order_by("id")
    if tenant_id is not None:
        tenants = tenants.filter(id=tenant_id)
    for tid in tenants.values_list("id", flat=True):
        registration = active_registration(tenant_id=tid)
        for memory_type, entry in sorted(registration.document["types"].items()):
            capacity = entry["capacity"]["per_subject_scope"]
            if capacity is None:
                continue
            for group in over_capacity_groups(
                tenant_id=tid, memory_type=memory_type, capacity=capacity, limit=limit - proposed
            ):
                if proposed >= limit:
                    return proposed
                plan = compaction_plan(
                    tenant_id=tid,
                    memory_type=memory_type,
                    group=group,
                    capacity=capacity,
                    parameters=entry["activation"],
                    now=now,
                    scan=scan,
                )
                if plan is None:
                    continue
                try:
                    proposed += _propose(tid, plan)
                except DomainError as refused:  # a member moved since it was read: the next run replans
                    logger.info("compaction of %s not proposed: %s", group, refused.detail)
    return proposed


def over_capacity_groups(*, tenant_id, memory_type: str, capacity: int, limit: int) -> list[dict]:
    """The subject+scope groups of one type holding more than ``capacity`` active memories (one query).

    Groups with fewer than two memories that may be members (persistent, no
    expiry) are left out, so groups that cannot be compacted never take the
    places of those that can.
    """
    if limit <= 0:
        return []
    eligible = Q(expires_at__isnull=True, retention_policy=Memory.RetentionPolicy.PERSISTENT)
    rows = (
        Memory.objects.filter(tenant_id=tenant_id, type=memory_type, state=Memory.State.ACTIVE)
        .values("subject_kind", "subject_id", "scope")
        .annotate(active=Count("*"), eligible=Count("subject_kind", filter=eligible))  # both from the index
        .filter(active__gt=capacity, eligible__gte=2)
        .order_by("-active", "subject_kind", "subject_id", "scope")[:limit]
    )
    return list(rows)


def compaction_plan(
    *,
    tenant_id,
    memory_type: str,
    group: dict,
    capacity: int,
    parameters: dict,
    now: datetime,
    scan: int,
) -> dict | None:
    """The frozen plan for one over-capacity group: its lowest-activation members and the summary.

    ``active - capacity + 1`` members go, so the group ends at capacity with the
    successor counting as one. Fenced and expiring memories are never members.
    None when fewer than two members qualify.
    """
    wanted = min(group["active"] - capacity + 1, MAX_MEMBERS)  # a bigger excess takes several runs
    invalid = MemoryEvidence.objects.filter(
        memory_id=OuterRef("pk"),
        memory_revision=OuterRef("revision"),
        evidence_revision__status=EvidenceRevision.Status.INVALIDATED,
    )
    rows = list(
        Memory.objects.filter(
            tenant_id=tenant_id,
            type=memory_type,
            state=Memory.State.ACTIVE,
            subject_kind=group["subject_kind"],
            subject_id=group["subject_id"],
            scope=group["scope"],
            expires_at__isnull=True,
            retention_policy=Memory.RetentionPolicy.PERSISTENT,
        )
        .exclude(Exists(invalid))
        .order_by("updated_at", "id")
        .only("id", "revision", "content", "created_at", "updated_at")[: max(scan, wanted)]
    )
    uses = _uses(tenant_id, [memory.id for memory in rows])
    levels = {
        memory.id: level_at(
            [(memory.updated_at.date(), 1), *uses.get(memory.id, [])], at=now, parameters=parameters
        )
        for memory in rows
    }
    chosen = sorted(rows, key=lambda m: (levels[m.id], m.updated_at, str(m.id)))[:wanted]
    if len(chosen) < 2:
        return None
    chosen.sort(key=lambda m: (m.created_at, str(m.id)))
    subject = {"kind": group["subject_kind"], "id": group["subject_id"]}
    summariser = active_summariser()
    content = summariser.summarise(
        memory_type=memory_type,
        subject=subject,
        scope=group["scope"],
        contents=[memory.content for memory in chosen],
    )
    return {
        "subject": subject,
        "scope": group["scope"],
        "type": memory_type,
        "members": [{"memory_id": str(m.id), "revision": m.revision} for m in chosen],
        "content": content,
        "summariser": summariser.name,
        "capacity": capacity,
        "active": group["active"],
    }


def _uses(tenant_id, ids: list) -> dict:
    uses: dict = {}
    if not ids:
        return uses
    rows = MemoryReads.objects.filter(tenant_id=tenant_id, memory_id__in=ids)
    for memory_id, day, reads in rows.values_list("memory_id", "day", "reads"):
        uses.setdefault(memory_id, []).append((day, reads))
    return uses


def _propose(tenant_id, plan: dict) -> int:
    """Submit one compaction as the tenant's system agent; 0 if this exact plan was proposed already."""
    frozen = {key: plan[key] for key in ("subject", "scope", "type", "members", "content", "summariser")}
    plan_digest = digest(frozen)
    submission = submit_proposal(
        agent=system_agent(tenant_id=tenant_id),
        idempotency_key=f"compaction:{plan_digest}",
        payload={
            "action": Proposal.Action.COMPACT,
            "compaction": frozen,
            "reason": (
                f"capacity: {plan['active']} active {plan['type']} memories over {plan['capacity']};"
                f" {len(plan['members'])} compacted into one summary"
            ),
        },
        request_hash=plan_digest,
    )
    return int(not submission.replayed)


# --- after a purge -----------------------------------------------------------------------------


RESUMMARY_KEY = "resummary:"  # the idempotency key of a re-summary after a purge begins so


def propose_resummaries(*, purge: Proposal, successor_ids: Iterable[Any]) -> list[Proposal]:
    """Re-propose each summary a purged source was in, from the sources that remain.

    Runs in the executor's purge transaction (the lineage rows are already
    gone), so the purge and the re-proposal commit together. An ``update`` of
    the successor with content re-summarised from the remaining sources and
    bound to their evidence; an ``expire`` when no source remains. The system
    agent proposes both; ``auto-system-resummary`` and ``auto-system-retention``
    do not apply to them unless their facts fit, otherwise they go to review.
    """
    proposals = []
    agent = system_agent(tenant_id=purge.tenant_id)
    for successor in Memory.objects.filter(tenant_id=purge.tenant_id, pk__in=list(successor_ids)).order_by(
        "pk"
    ):
        sources = list(
            Memory.objects.filter(tenant_id=purge.tenant_id, summarised_in__successor=successor).order_by(
                "created_at", "id"
            )
        )
        key = f"{RESUMMARY_KEY}{successor.pk}:{successor.revision}:{purge.target_id}"
        reason = f"a source of this summary ({purge.target_id}) was purged"
        payload: ProposalPayload
        if sources:
            summariser = active_summariser()
            content = summariser.summarise(
                memory_type=successor.type,
                subject={"kind": successor.subject_kind, "id": successor.subject_id},
                scope=successor.scope,
                contents=[source.content for source in sources],
            )
            payload = {
                "action": Proposal.Action.UPDATE,
                "memory_id": successor.pk,
                "base_revision": successor.revision,
                "changes": {"content": content},
                "evidence": _current_bindings(sources),
                "rationale": reason,
            }
        else:
            payload = {
                "action": Proposal.Action.EXPIRE,
                "memory_id": successor.pk,
                "base_revision": successor.revision,
                "reason": f"{reason}; no source remains",
            }
        proposals.append(
            create_proposal(agent=agent, idempotency_key=key, payload=payload, request_hash=digest(key))
        )
    return proposals


def _current_bindings(sources: list[Memory]) -> list:
    revisions = {source.pk: source.revision for source in sources}
    links = MemoryEvidence.objects.filter(memory_id__in=revisions).select_related("evidence_revision")
    found = {
        link.evidence_revision_id: link.evidence_revision
        for link in links
        if revisions[link.memory_id] == link.memory_revision
    }
    return [
        {"evidence_id": r.source_id, "revision": r.revision, "content_hash": r.content_hash}
        for r in found.values()
    ]
