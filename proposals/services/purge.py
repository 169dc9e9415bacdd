"""What a purge removes from proposals and Dreaming runs: their copies of the purged memory's content."""

from typing import Any

from django.db.models import Q

from memory_core.models import Memory
from proposals.models import DreamingRun, Proposal

# What a proposal keeps of content once what it is about is purged: its ids and digests only.
SCRUBBED_PROPOSAL: dict[str, Any] = {
    "fields": {"purged": True},
    "rationale": "",
    "dedupe_key": "",
    "policy_context": {"purged": True},
}


def withdraw_for_erasure(erasure: Proposal) -> tuple[list[str], dict[str, int]]:
    """Withdraw the open proposals an erasure's plan named and scrub what they froze.

    Runs in the executor's erasure transaction; returns the ids withdrawn (those
    still open) and the rows scrubbed. One that closed since keeps its status and is
    scrubbed all the same: it was about what the erasure removes.
    """
    planned = erasure.fields["proposals"]
    still_open = Proposal.objects.filter(
        tenant_id=erasure.tenant_id, pk__in=planned, status__in=Proposal.OPEN_STATUSES
    )
    withdrawn = sorted(str(pk) for pk in still_open.values_list("pk", flat=True))
    counts = {
        "proposals.Proposal": still_open.update(status=Proposal.Status.WITHDRAWN, **SCRUBBED_PROPOSAL)
        + Proposal.objects.filter(tenant_id=erasure.tenant_id, pk__in=planned)
        .exclude(pk__in=withdrawn)
        .update(**SCRUBBED_PROPOSAL),
        "proposals.HistoricalProposal": Proposal.history.filter(id__in=planned).update(**SCRUBBED_PROPOSAL),
    }
    return withdrawn, counts


def scrub_purged_content(*, purge: Proposal | None, memory: Memory, summaries: list[Any]) -> dict[str, int]:
    """Remove a purged memory's content from the proposals and Dreaming runs about it.

    Digests stay (receipts refer to them); the frozen fields, the agent's
    rationale, the dedupe key and the policy context (which names the
    subject), all of which repeat what the memory said or whom it was about,
    do not. Runs in the executor's purge transaction; ``purge``, the proposal
    being applied, is scrubbed in memory too, as its last history row is
    written from it afterwards (an erasure passes None: it scrubs itself).
    ``memory`` is the purged row as it was;
    ``summaries`` the successors it was a source of, whose compaction proposals
    froze a summary that quotes it.
    """
    tenant_id, memory_id = memory.tenant_id, memory.pk
    proposals = Proposal.objects.filter(tenant_id=tenant_id, target_id=memory_id)
    history = Proposal.history.filter(tenant_id=tenant_id, target_id=memory_id)
    scrubbed = SCRUBBED_PROPOSAL
    for name, value in scrubbed.items():
        if purge is not None:
            setattr(purge, name, value)
    runs = _scrub_dreaming_runs(memory, runs=proposals.exclude(dreaming_run=None).values("dreaming_run_id"))
    compactions = _scrub_compactions(tenant_id, summaries)
    return {
        "proposals.Proposal": proposals.update(**scrubbed) + compactions[0],
        "proposals.HistoricalProposal": history.update(**scrubbed) + compactions[1],
        "proposals.DreamingRun": runs,
    }


def _scrub_compactions(tenant_id: Any, summaries: list[Any]) -> tuple[int, int]:
    """Blank the summary content the compaction proposals of ``summaries`` froze (members stay)."""
    if not summaries:
        return 0, 0
    counts = []
    for rows in (
        Proposal.objects.filter(tenant_id=tenant_id, action=Proposal.Action.COMPACT, target_id__in=summaries),
        Proposal.history.filter(tenant_id=tenant_id, action=Proposal.Action.COMPACT, target_id__in=summaries),
    ):
        changed = list(rows.only("pk", "fields"))
        for row in changed:
            row.fields = {**row.fields, "memory": {**row.fields["memory"], "content": {"purged": True}}}
        counts.append(rows.model._default_manager.bulk_update(changed, ["fields"]) if changed else 0)
    return counts[0], counts[1]


def _scrub_dreaming_runs(memory: Memory, *, runs: Any) -> int:
    """Blank the subject and the planned content of every run the memory was frozen in.

    A run froze one subject's window: its subject id, and the fields and reasons of
    its plan (a contradiction names the ``preference_key``, an update or create quotes
    content), are about the purged memory. Its members, digests, planner and the ids
    of the proposals it made stay, so the run still accounts for its receipts. Runs are
    found by the memory's subject and by the proposals about it (one query), members
    matched here.
    """
    candidates = DreamingRun.objects.filter(
        Q(subject_kind=memory.subject_kind, subject_id=memory.subject_id) | Q(pk__in=runs),
        tenant_id=memory.tenant_id,
    ).only("id", "members", "subject_id", "plan")
    frozen_in = [run for run in candidates if str(memory.pk) in run.member_ids]
    for run in frozen_in:
        run.subject_id = ""
        run.plan = [_scrubbed_action(action) for action in run.plan]
    return DreamingRun.objects.bulk_update(frozen_in, ["subject_id", "plan"])


def _scrubbed_action(action: dict[str, Any]) -> dict[str, Any]:
    if "refused" in action:  # a refused plan keeps only what was refused, as text
        return {"refused": "purged"}
    return {**action, "fields": {"purged": True} if action.get("fields") else {}, "reason": ""}
