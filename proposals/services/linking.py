"""Freezing a link proposal: both ends in this tenant and scope, an allowlisted relation, their evidence.

A link is typed from the source memory's registration allowlist
(``links.relations``; none registered, none allowed), joins two active
memories of one tenant and one scope, and freezes the evidence each end
rests on, so the executor can refuse it if either end moved. The executor
re-checks the same with ``link_refusal``.
"""

from typing import Any

from core.errors import DomainError
from memory_core.models import Memory, MemoryEvidence
from proposals.errors import BaseRevisionStale
from proposals.models import Proposal
from proposals.payloads import ProposalPayload
from registrations.compiled import ActiveRegistration


class LinkRefused(DomainError):
    status = 422


class LinkRelationNotAllowed(LinkRefused):
    code = "link_relation_not_allowed"
    title = "The registration does not allow this relation from this memory type"


class LinkCrossScope(LinkRefused):
    code = "link_cross_scope"
    title = "Links join memories of one tenant and one scope only"


class LinkEndNotFound(LinkRefused):
    code = "link_end_not_found"
    title = "The other end of the link is not an active memory in this tenant"


def allowed_relations(registration: ActiveRegistration, memory_type: str) -> list[str]:
    return list(registration.entry(memory_type).get("links", {}).get("relations", []))


def prepare_link(
    proposal: Proposal, memory: Memory | None, payload: ProposalPayload, registration: ActiveRegistration
) -> tuple[str, dict]:
    """Freeze the link on ``proposal.fields``; return the target fact and the source's snapshot."""
    link = payload["link"]
    proposal.target_memory_id = payload["memory_id"]
    proposal.base_revision = payload["base_revision"]
    proposal.fields = {
        "relation": link["relation"],
        "to_memory_id": str(link["to_memory_id"]),
        "to_revision": link["to_revision"],
    }
    if memory is None:
        return "missing", {}
    if memory.revision != payload["base_revision"]:
        raise BaseRevisionStale(current_revision=memory.revision)
    if link["relation"] not in allowed_relations(registration, memory.type):
        raise LinkRelationNotAllowed(relation=link["relation"], memory_type=memory.type)
    other = Memory.objects.filter(tenant_id=memory.tenant_id, pk=link["to_memory_id"]).first()
    if other is None or other.pk == memory.pk or not other.is_active:
        raise LinkEndNotFound()  # another tenant's memory reads as missing
    if other.revision != link["to_revision"]:
        raise BaseRevisionStale(current_revision=other.revision)
    if other.scope != memory.scope:
        raise LinkCrossScope(from_scope=memory.scope, to_scope=other.scope)
    proposal.fields["evidence"] = ends_evidence(memory, other)
    return ("current" if memory.is_active else "inactive"), memory.snapshot()


def ends_evidence(source: Memory, target: Memory) -> dict[str, list[dict[str, Any]]]:
    """The evidence bindings each end's current revision rests on (the link is bound to both)."""
    rows = MemoryEvidence.objects.filter(
        memory_id__in=[source.pk, target.pk], memory_revision__in={source.revision, target.revision}
    ).select_related("evidence_revision")
    bindings: dict[str, list[dict[str, Any]]] = {"from": [], "to": []}
    for row in rows.order_by("evidence_revision__source_id", "evidence_revision__revision"):
        end = source if row.memory_id == source.pk else target
        if row.memory_revision == end.revision:
            bindings["from" if end is source else "to"].append(dict(row.evidence_revision.binding()))
    return bindings


def link_refusal(
    proposal: Proposal,
    source: Memory,
    registration: ActiveRegistration,
    *,
    moved_by_run: frozenset[str] = frozenset(),
) -> str | None:
    """Why the executor must not write this link now (None: write it); the same checks as freezing.

    ``moved_by_run``: members a Dreaming run moved itself (its merged-away duplicates, now
    dormant); the executor checked that nothing else moved them, so the other end may be one.
    """
    fields = proposal.fields
    if fields["relation"] not in allowed_relations(registration, source.type):
        return f"relation {fields['relation']} is no longer allowed from {source.type}"
    # Locked (the executor's transaction), so the end cannot move between this check and the write.
    other = (
        Memory.objects.select_for_update()
        .filter(tenant_id=source.tenant_id, pk=fields["to_memory_id"])
        .first()
    )
    by_run = other is not None and str(other.pk) in moved_by_run
    if other is None or not (other.is_active or (by_run and other.state == Memory.State.DORMANT)):
        return "the other end is no longer an active memory"
    if (other.revision != fields["to_revision"] and not by_run) or other.scope != source.scope:
        return f"the other end moved (revision {other.revision}, scope {other.scope})"
    if ends_evidence(source, other) != fields["evidence"]:
        return "the evidence of an end changed"
    if source.links_out.filter(target=other, relation=fields["relation"]).exists():
        return "this link already exists"
    return None
