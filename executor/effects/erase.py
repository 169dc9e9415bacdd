"""``erase``: purge every memory of a reviewed erasure plan, each with its own receipt, then certify.

All of it happens in the one transaction that applies the erasure, so a subject is
never half erased: each planned memory is purged as a purge would purge it (its
links, vectors, lineage, history, the proposals, Dreaming runs and MGP records that
quote it, the query text of the searches that served it), and gets a receipt of its
own in the chain; the open proposals about the subject are withdrawn and scrubbed; the grants to act
for the subject are revoked, and they, the review decisions made for the subject
and their history name the subject by pseudonym only (``executor.pseudonymising``);
a summary that keeps other sources is re-summarised from them (``propose_resummaries``,
under the rule set). The erasure's own receipt, last, is the certificate
(``executor.erasure``): what was removed, the all-tables scan, the exports that held it.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from django.utils import timezone

from evidence.models import EvidenceRevision, EvidenceSource
from executor.effects.base import Applied, ApplyContext, Check, Effect
from executor.effects.checks import check_new, stale
from executor.erasure import exports_holding, long_enough, scan, strings, subject_digest, traces
from executor.pseudonymising import pseudonymise_subject
from maintenance.compaction import propose_resummaries
from memory_core.models import AccessEvent, Memory
from memory_core.mutations import purge_memory
from memory_core.signals import memory_purged
from proposals.kinds.erase import erasure_refusal
from proposals.models import OutboxEntry, Proposal
from proposals.services import scrub_purged_content, withdraw_for_erasure
from tenancy.models import Agent


class EraseEffect(Effect):
    def verify(self, ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
        requester = Agent.objects.get(pk=ctx.proposal.submitted_by_id)
        return check_new(ctx) or stale(erasure_refusal(ctx.proposal, requester))

    def locked_members(self, proposal: Proposal) -> list[uuid.UUID]:
        """The planned memories: the batch locks them with the targets."""
        return [uuid.UUID(member["memory_id"]) for member in proposal.fields["members"]]

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        proposal = ctx.proposal
        request = proposal.fields["erasure"]
        forgetting = FORGETTING[request["kind"]]
        planned = [ctx.members.get(uuid.UUID(m["memory_id"])) for m in proposal.fields["members"]]
        memories = [memory for memory in planned if memory is not None]  # the rest went since
        values = forgetting.traces(request) | {text for memory in memories for text in traces(memory)}
        exports = exports_holding(proposal.tenant_id, memories)
        removed, rows, successors = [], _Counts(), set()
        for memory in memories:
            counts, summaries = _purge(memory)
            rows.add(counts)
            successors |= set(summaries)
            removed.append(_item_receipt(ctx, memory, counts))
        erased = {memory.pk for memory in memories}
        withdrawn, scrubbed = withdraw_for_erasure(proposal)
        rows.add(scrubbed)
        named = forgetting.forget(proposal, request, rows)
        authority = forgetting.pseudonymise(proposal, request)
        resummaries = propose_resummaries(purge=proposal, successor_ids=sorted(successors - erased, key=str))
        _scrub_request(proposal, named, rows)
        found = scan(proposal.tenant_id, values)
        certificate: dict[str, Any] = {
            **named,
            "removed": removed,
            "rows": rows.counts,
            "withdrawn": withdrawn,
            "resummarised": [{"memory_id": str(p.target_id), "proposal_id": str(p.pk)} for p in resummaries],
            "exports": exports,
            "scan": found,
            **authority,
            "clean": not found["found"],
        }
        return Applied(None, {"erasure": certificate})


class _Counts:
    """Rows removed or scrubbed, by model, summed over every purge of the erasure."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, counts: dict[str, int]) -> None:
        for label, count in counts.items():
            self.counts[label] = self.counts.get(label, 0) + count


def _purge(memory: Memory) -> tuple[dict[str, int], list[Any]]:
    """Purge one planned memory as ``PurgeEffect`` does, from whatever state it is in."""
    removed, successors = purge_memory(memory=memory, verb="erase")
    removed.update(scrub_purged_content(purge=None, memory=memory, summaries=successors))
    for _, counts in memory_purged.send(Memory, tenant_id=memory.tenant_id, memory_ids=[memory.pk]):
        removed.update(cast(dict[str, int], counts or {}))
    return removed, successors


def _item_receipt(ctx: ApplyContext, memory: Memory, counts: dict[str, int]) -> dict[str, Any]:
    """Queue one purged memory's receipt (before the erasure's own); return how the certificate names it."""
    proposal, item_id = ctx.proposal, uuid.uuid4()
    entry = OutboxEntry.objects.create(
        tenant_id=proposal.tenant_id,
        proposal=proposal,
        action_digest=ctx.entry.action_digest,
        status=OutboxEntry.Status.DONE,
        available_at=timezone.now(),
        trace_context=ctx.entry.trace_context,
    )
    ctx.writes.receipts.append(
        {
            "id": item_id,
            "tenant_id": proposal.tenant_id,
            "proposal": proposal,
            "outbox_entry": entry,
            "outcome": "applied",
            "reason": "",
            "memory_id": memory.pk,
            "before_revision": memory.revision,
            "before_content_hash": memory.content_hash,
            "after_revision": None,
            "after_content_hash": "",
            "action_digest": ctx.entry.action_digest,
            "evidence": [],
            "decision_ids": ctx.authority.decision_ids,
            "effects": {"purged": counts, "erasure": str(proposal.target_id)},
            "policy_fingerprint": proposal.policy_fingerprint,
            "registration_version": ctx.registration.active.version,
            "executor": ctx.writes.worker,
        }
    )
    return {
        "memory_id": str(memory.pk),
        "revision": memory.revision,
        "content_hash": memory.content_hash,
        "receipt_id": str(item_id),
    }


def _scrub_request(erasure: Proposal, named: dict[str, Any], rows: "_Counts") -> None:
    """Keep the erasure's own request only as the certificate names it (a subject by a keyed digest).

    Scrubbed in the database now (the scan reads it next) and on this object, from
    which the proposal is saved again after the receipt; its history rows too.
    """
    erasure.fields = {**erasure.fields, "erasure": {"kind": erasure.fields["erasure"]["kind"], **named}}
    erasure.policy_context = {"erased": True}
    erasure.rationale = ""
    scrubbed = {"fields": erasure.fields, "policy_context": erasure.policy_context, "rationale": ""}
    Proposal.objects.filter(pk=erasure.pk).update(**scrubbed)
    rows.add({"proposals.HistoricalProposal": Proposal.history.filter(id=erasure.pk).update(**scrubbed)})


# --- what each kind of erasure forgets besides its memories ------------------------------------


@dataclass(frozen=True)
class Forgetting:
    """``traces``: what else the scan looks for, read before anything goes; ``forget``: what the
    kind removes itself after the purges, returning how the certificate names what was erased;
    ``pseudonymise``: the authority records it rewrites, as the certificate lists them."""

    traces: Callable[[dict[str, Any]], set[str]]
    forget: Callable[[Proposal, dict[str, Any], "_Counts"], dict[str, Any]]
    pseudonymise: Callable[[Proposal, dict[str, Any]], dict[str, Any]]


def _subject_traces(request: dict[str, Any]) -> set[str]:
    return {request["subject"]["id"]}


def _forget_subject(erasure: Proposal, request: dict[str, Any], rows: "_Counts") -> dict[str, Any]:
    """Blank the searches whose query named the subject (those that served a memory are blank already)."""
    named = AccessEvent.objects.filter(tenant_id=erasure.tenant_id, query__contains=request["subject"]["id"])
    rows.add({"memory_core.AccessEvent": named.exclude(query="").blank_queries()})
    return {"subject": subject_digest(request["subject"])}


def _pseudonymise_subject(erasure: Proposal, request: dict[str, Any]) -> dict[str, Any]:
    return pseudonymise_subject(tenant_id=erasure.tenant_id, subject=request["subject"])


def _source_traces(request: dict[str, Any]) -> set[str]:
    source = EvidenceSource.objects.get(pk=request["evidence_id"])
    contents = EvidenceRevision.objects.filter(source=source).values_list("content", flat=True)
    return long_enough({source.external_ref, *(text for content in contents for text in strings(content))})


def _retract_source(erasure: Proposal, request: dict[str, Any], rows: "_Counts") -> dict[str, Any]:
    """Invalidate every revision of the source and remove its content; its hashes stay for the chain."""
    revisions = EvidenceRevision.objects.filter(tenant_id=erasure.tenant_id, source_id=request["evidence_id"])
    retracted = revisions.update(
        content=EvidenceRevision.RETRACTED_CONTENT,
        status=EvidenceRevision.Status.INVALIDATED,
        status_reason=f"retracted by erasure {erasure.target_id}",
        admission_findings=[],
    )
    source = EvidenceSource.objects.filter(pk=request["evidence_id"])
    rows.add(
        {
            "evidence.EvidenceRevision": retracted,
            "evidence.EvidenceSource": source.update(external_ref=f"retracted:{request['evidence_id']}"),
        }
    )
    return {"source": {"evidence_id": request["evidence_id"], "revisions": request["revisions"]}}


def _no_authority_records(erasure: Proposal, request: dict[str, Any]) -> dict[str, Any]:
    """A source names no person: grants and decisions stay as they are."""
    return {"pseudonymised": [], "revoked_grants": []}


FORGETTING: dict[str, Forgetting] = {
    "subject": Forgetting(_subject_traces, _forget_subject, _pseudonymise_subject),
    "source": Forgetting(_source_traces, _retract_source, _no_authority_records),
}
