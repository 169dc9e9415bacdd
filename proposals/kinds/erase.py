"""``erase``: forget a person, every memory about a subject and what was derived from them, in one action.

The server plans the erasure when it is requested (:func:`erasure_plan`), never the
client: every memory about the subject in any state, every summary derived only
from those (following lineage), the open proposals about them, and the summaries
that also rest on other memories (re-summarised from those, under the rule set, as a
purge does). The plan is frozen in the proposal, so its digest, the one reviewers
decide on, covers each memory by id, revision and content hash; nothing it names is
content. The executor plans again when it applies (:func:`erasure_refusal`): a memory
about the subject that appeared since makes the erasure ``stale``, so what is erased
is never more than what was approved, and never leaves one of them behind.

Who may ask: the tenant's system agent (for an operator, who is never one of the
approvers) or an agent holding a live grant to act for the subject.
"""

import uuid
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from core.errors import DomainError
from memory_core.models import Memory, MemoryLineage
from proposals.kinds.base import Freezing, Prepared
from proposals.models import Proposal
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
    title = "Only the subject's own grant holder or an operator may ask to erase a subject"


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


def prepare_erase(freezing: Freezing) -> Prepared:
    """Check who asks, plan the erasure and freeze the plan; the target is the erasure's own id."""
    proposal, payload = freezing.proposal, freezing.payload
    named = (payload.get("erasure") or {}).get("subject") or {}
    if not (named.get("kind") and named.get("id")):
        raise ErasureInvalid("an erasure names its subject: kind and id")
    subject = {"kind": str(named["kind"]), "id": str(named["id"])}
    if not _may_request(freezing.agent, subject):
        raise ErasureNotAllowed(subject_kind=subject["kind"])
    plan = erasure_plan(freezing.tenant_id, subject)
    if len(plan.members) > MAX_MEMBERS:
        raise ErasureInvalid(f"an erasure removes at most {MAX_MEMBERS} memories", found=len(plan.members))
    proposal.target_id = proposal.target_id or uuid.uuid4()
    proposal.base_revision = 0
    proposal.fields = {
        "erasure": {"kind": "subject", "subject": subject},
        **plan.frozen(),
        "requested_by": payload.get("requested_by"),
        "reason": payload.get("reason", ""),
    }
    return Prepared("new")


def _may_request(agent: Agent, subject: dict[str, str]) -> bool:
    """The system agent asks for operators; an agent asks only for a subject it holds a live grant for."""
    return agent.is_system or may_act_for(agent, subject)


def erasure_plan(tenant_id: Any, subject: dict[str, str]) -> ErasurePlan:
    """Plan a subject's erasure from the rows as they are now: a handful of queries, whatever its size."""
    about = Memory.objects.filter(tenant_id=tenant_id, subject_kind=subject["kind"], subject_id=subject["id"])
    rows = {memory.pk: memory for memory in about.only(*_PLANNED_COLUMNS)}
    derived, resummarised = _derived(tenant_id, set(rows))
    if derived:
        rows |= {
            m.pk: m
            for m in Memory.objects.filter(tenant_id=tenant_id, pk__in=derived).only(*_PLANNED_COLUMNS)
        }
    members = [
        {
            "memory_id": str(memory.pk),
            "revision": memory.revision,
            "content_hash": memory.content_hash,
            "type": memory.type,
            "state": memory.state,
            "because": "derived" if memory.pk in derived else "subject",
        }
        for memory in sorted(rows.values(), key=lambda m: str(m.pk))
    ]
    return ErasurePlan(
        members, _open_proposals(tenant_id, subject, set(rows)), sorted(map(str, resummarised))
    )


_PLANNED_COLUMNS = ("id", "tenant_id", "revision", "content", "type", "state")


def _derived(tenant_id: Any, erased: set[Any]) -> tuple[set[Any], set[Any]]:
    """Follow lineage from ``erased``: the summaries left with no other source, and those that keep some.

    A summary derived only from erased memories says nothing but what they said, so it
    goes too (and so on, up the lineage); one that keeps other sources is re-summarised
    from them when the erasure applies. Two queries a level of lineage.
    """
    derived: set[Any] = set()
    kept: set[Any] = set()
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
        kept = successors - newly
        if not newly:
            return derived, kept
        derived |= newly


def _open_proposals(tenant_id: Any, subject: dict[str, str], memory_ids: set[Any]) -> list[str]:
    """The open proposals about the subject or its memories: withdrawn and scrubbed when it applies."""
    about = (
        Q(target_id__in=memory_ids)
        | Q(fields__subject__kind=subject["kind"], fields__subject__id=subject["id"])
        | Q(fields__memory__subject__kind=subject["kind"], fields__memory__subject__id=subject["id"])
    )
    open_ = Proposal.objects.filter(tenant_id=tenant_id, status__in=Proposal.OPEN_STATUSES).filter(about)
    return sorted(str(pk) for pk in open_.exclude(action=Proposal.Action.ERASE).values_list("pk", flat=True))


# --- the executor's re-check ---------------------------------------------------------------


def erasure_refusal(proposal: Proposal, requester: Agent) -> str | None:
    """Why the executor must not apply this erasure now (None: apply it).

    The requester's grant must still be live, and no memory may have joined the
    subject since the plan was frozen: those would be left behind.
    """
    subject = proposal.fields["erasure"]["subject"]
    if not _may_request(requester, subject):
        return "the requesting agent no longer holds a grant to act for the subject"
    now = erasure_plan(proposal.tenant_id, subject)
    planned = {member["memory_id"] for member in proposal.fields["members"]}
    if joined := sorted(now.member_ids - planned):
        named = ", ".join(joined[:10])
        return f"{len(joined)} memories joined the subject since the plan was frozen: {named}"
    return None
