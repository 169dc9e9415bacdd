"""``erase``: forget a person (a subject) or a source (an evidence source), and what derives from them.

The server plans the erasure when it is requested (:func:`erasure_plan`), never the
client. The plan holds every memory the erasure is of (about the subject, in any
state; or resting on any revision of the source), every summary derived only from
those (following lineage), the open proposals about them, and the summaries that
also rest on other memories (re-summarised from those, under the rule set, as after a
purge). It is frozen in the proposal, so its digest, the one reviewers decide on,
covers each memory by id, revision and content hash; nothing it names is content.
The executor plans again when it applies (:func:`erasure_refusal`): a memory that
joined since makes the erasure ``stale``, so what is erased is never more than what
was approved, and never leaves one of them behind.

Who may ask (``ERASURE_KINDS``): the tenant's system agent, for an operator who is
never one of the approvers; for a subject, an agent holding a live grant to act for
it; for a source, the agent that registered it.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet

from core.errors import DomainError
from evidence.models import EvidenceRevision, EvidenceSource
from memory_core.models import Memory, MemoryEvidence, MemoryLineage
from proposals.kinds.base import Freezing, Prepared
from proposals.models import Proposal, ProposalEvidence
from tenancy.models import Agent
from tenancy.services import may_act_for

MAX_MEMBERS = 2000  # one erasure's memories (one review, one transaction, one receipt each)


class ErasureInvalid(DomainError):
    code = "erasure_invalid"
    status = 422
    title = "The erasure cannot be planned"


class ErasureNotAllowed(DomainError):
    code = "erasure_not_allowed"
    status = 403
    title = "Only the subject's grant holder, the source's registrant or an operator may ask"


@dataclass(frozen=True)
class ErasurePlan:
    """What an erasure removes (``members``), withdraws (``proposals``) and re-summarises."""

    members: list[dict[str, Any]]
    proposals: list[str]
    resummarised: list[str]

    @property
    def member_ids(self) -> set[str]:
        return {member["memory_id"] for member in self.members}

    def frozen(self) -> dict[str, Any]:
        return {"members": self.members, "proposals": self.proposals, "resummarised": self.resummarised}


@dataclass(frozen=True)
class ErasureKind:
    """What one kind of erasure is of: how a request names it, who may ask, what it reaches."""

    named: Callable[[Any, dict[str, Any]], dict[str, Any]]  # the request as frozen (raises if unknown)
    may_request: Callable[[Agent, dict[str, Any]], bool]
    memories: Callable[[Any, dict[str, Any]], QuerySet[Memory]]
    proposals: Callable[[dict[str, Any]], Q]  # the open proposals about it, besides its memories'


# --- subjects ------------------------------------------------------------------------------


def _named_subject(tenant_id: Any, named: dict[str, Any]) -> dict[str, Any]:
    subject = named.get("subject") or {}
    if not (subject.get("kind") and subject.get("id")):
        raise ErasureInvalid("an erasure names its subject: kind and id")
    return {"kind": "subject", "subject": {"kind": str(subject["kind"]), "id": str(subject["id"])}}


def _may_erase_subject(agent: Agent, request: dict[str, Any]) -> bool:
    return agent.is_system or may_act_for(agent, request["subject"])


def _subject_memories(tenant_id: Any, request: dict[str, Any]) -> QuerySet[Memory]:
    subject = request["subject"]
    return Memory.objects.filter(tenant_id=tenant_id, subject_kind=subject["kind"], subject_id=subject["id"])


def _about_subject(request: dict[str, Any]) -> Q:
    kind, id_ = request["subject"]["kind"], request["subject"]["id"]
    return Q(fields__subject__kind=kind, fields__subject__id=id_) | Q(
        fields__memory__subject__kind=kind, fields__memory__subject__id=id_
    )


# --- sources -------------------------------------------------------------------------------


def _named_source(tenant_id: Any, named: dict[str, Any]) -> dict[str, Any]:
    """The source and each of its revisions by number and content hash (another tenant's is unknown)."""
    evidence_id = (named.get("source") or {}).get("evidence_id")
    source = (
        EvidenceSource.objects.filter(tenant_id=tenant_id, pk=evidence_id).first() if evidence_id else None
    )
    if source is None:
        raise ErasureInvalid("no such evidence source in this tenant", evidence_id=str(evidence_id or ""))
    revisions = EvidenceRevision.objects.filter(source=source).order_by("revision")
    return {
        "kind": "source",
        "evidence_id": str(source.pk),
        "revisions": [
            {"revision": number, "content_hash": content_hash}
            for number, content_hash in revisions.values_list("revision", "content_hash")
        ],
    }


def _may_retract_source(agent: Agent, request: dict[str, Any]) -> bool:
    source = EvidenceSource.objects.filter(pk=request["evidence_id"])
    return agent.is_system or source.filter(created_by=agent).exists()


def _source_memories(tenant_id: Any, request: dict[str, Any]) -> QuerySet[Memory]:
    """The memories citing any revision of the source, summaries aside.

    A summary is bound to all its sources' evidence; whether it goes (all its sources
    do) or is re-summarised from the rest is decided by lineage (:func:`_derived`).
    """
    citing = MemoryEvidence.objects.filter(
        tenant_id=tenant_id, evidence_revision__source_id=request["evidence_id"]
    )
    summaries = MemoryLineage.objects.filter(successor_id=OuterRef("pk"))
    return Memory.objects.filter(tenant_id=tenant_id, pk__in=citing.values("memory_id")).exclude(
        Exists(summaries)
    )


def _citing_source(request: dict[str, Any]) -> Q:
    cited = ProposalEvidence.objects.filter(evidence_revision__source_id=request["evidence_id"])
    return Q(pk__in=cited.values("proposal_id"))


ERASURE_KINDS: dict[str, ErasureKind] = {
    "subject": ErasureKind(_named_subject, _may_erase_subject, _subject_memories, _about_subject),
    "source": ErasureKind(_named_source, _may_retract_source, _source_memories, _citing_source),
}


# --- freezing ------------------------------------------------------------------------------


def prepare_erase(freezing: Freezing) -> Prepared:
    """Check who asks, plan the erasure and freeze the plan; the target is the erasure's own id."""
    proposal, payload = freezing.proposal, freezing.payload
    named = payload.get("erasure") or {}
    kinds = [name for name in ERASURE_KINDS if name in named]
    if len(kinds) != 1:
        raise ErasureInvalid("an erasure is of one subject or of one source")
    kind = ERASURE_KINDS[kinds[0]]
    request = kind.named(freezing.tenant_id, named)
    if not kind.may_request(freezing.agent, request):
        raise ErasureNotAllowed(erasure_of=kinds[0])
    plan = erasure_plan(freezing.tenant_id, request)
    if len(plan.members) > MAX_MEMBERS:
        raise ErasureInvalid(f"an erasure removes at most {MAX_MEMBERS} memories", found=len(plan.members))
    proposal.target_id = proposal.target_id or uuid.uuid4()
    proposal.base_revision = 0
    proposal.fields = {
        "erasure": request,
        **plan.frozen(),
        "requested_by": payload.get("requested_by"),
        "reason": payload.get("reason", ""),
    }
    return Prepared("new")


def erasure_plan(tenant_id: Any, request: dict[str, Any]) -> ErasurePlan:
    """Plan an erasure from the rows as they are now: a handful of queries, whatever its size."""
    kind = ERASURE_KINDS[request["kind"]]
    rows = {memory.pk: memory for memory in kind.memories(tenant_id, request).only(*_PLANNED_COLUMNS)}
    derived, resummarised = _derived(tenant_id, set(rows))
    if derived:
        summaries = Memory.objects.filter(tenant_id=tenant_id, pk__in=derived).only(*_PLANNED_COLUMNS)
        rows |= {memory.pk: memory for memory in summaries}
    members = [
        {
            "memory_id": str(memory.pk),
            "revision": memory.revision,
            "content_hash": memory.content_hash,
            "type": memory.type,
            "state": memory.state,
            "because": "derived" if memory.pk in derived else request["kind"],
        }
        for memory in sorted(rows.values(), key=lambda m: str(m.pk))
    ]
    about = Q(target_id__in=set(rows)) | kind.proposals(request)
    open_ = Proposal.objects.filter(tenant_id=tenant_id, status__in=Proposal.OPEN_STATUSES).filter(about)
    proposals = sorted(
        str(pk) for pk in open_.exclude(action=Proposal.Action.ERASE).values_list("pk", flat=True)
    )
    return ErasurePlan(members, proposals, sorted(map(str, resummarised)))


_PLANNED_COLUMNS = ("id", "tenant_id", "revision", "content", "type", "state")


def _derived(tenant_id: Any, erased: set[Any]) -> tuple[set[Any], set[Any]]:
    """Follow lineage from ``erased``: the summaries left with no other source, and those that keep some.

    A summary derived only from erased memories says nothing but what they said, so it
    goes too (and so on, up the lineage); one that keeps other sources is re-summarised
    from them when the erasure applies. Two queries a level of lineage.
    """
    derived: set[Any] = set()
    while True:
        gone = erased | derived
        lineage = MemoryLineage.objects.filter(tenant_id=tenant_id)
        successors = set(lineage.filter(source_id__in=gone).values_list("successor_id", flat=True)) - gone
        sources: dict[Any, set[Any]] = {successor: set() for successor in successors}
        for successor_id, source_id in lineage.filter(successor_id__in=successors).values_list(
            "successor_id", "source_id"
        ):
            sources[successor_id].add(source_id)
        newly = {successor for successor, of in sources.items() if of <= gone}
        if not newly:
            return derived, successors
        derived |= newly


# --- the executor's re-check ---------------------------------------------------------------


def erasure_refusal(proposal: Proposal, requester: Agent) -> str | None:
    """Why the executor must not apply this erasure now (None: apply it).

    The requester must still be allowed to ask (a grant revoked since refuses it),
    and no memory may have joined since the plan was frozen: it would be left behind.
    """
    request = proposal.fields["erasure"]
    if not ERASURE_KINDS[request["kind"]].may_request(requester, request):
        return "the requesting agent may no longer ask for this erasure (its grant went)"
    now = erasure_plan(proposal.tenant_id, request)
    planned = {member["memory_id"] for member in proposal.fields["members"]}
    if joined := sorted(now.member_ids - planned):
        named = ", ".join(joined[:10])
        return f"{len(joined)} memories joined the erasure since the plan was frozen: {named}"
    return None
