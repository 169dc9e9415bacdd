"""Reads for reviewers: what a person may see and decide, and where approvals stand.

Tenant access is the rule in ``tenancy.selectors`` (re-exported here):
``decide_proposal`` to decide, ``audit_tenant`` to view, global grants ignored.
"""

import statistics
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from proposals.errors import DreamingRunNotFound, ProposalNotFound
from proposals.models import DreamingRun, Proposal
from proposals.selectors import dreaming_runs
from reviews.models import ReviewDecision
from tenancy.models import Tenant
from tenancy.selectors import AUDIT, DECIDE, decidable_tenants, viewable_tenants  # noqa: F401 (re-exported)


def can_decide(user, tenant: Tenant) -> bool:
    return decidable_tenants(user).filter(pk=tenant.pk).exists()


def is_submitter(user, proposal: Proposal) -> bool:
    """A person linked to the submitting agent counts as the submitter."""
    return proposal.submitted_by.user_id is not None and proposal.submitted_by.user_id == user.pk


QUEUE_ORDERS = {
    "age": ("created_at", "id"),
    "-age": ("-created_at", "-id"),
    "risk": ("-risk_rank", "created_at", "id"),
}


def proposal_owners(proposal: Proposal) -> dict[str, str]:
    """The owners a proposal names, as ``kind:id`` → their part in it: whom it acts for, whom it is about."""
    named = [
        (proposal.policy_context.get("acting_for_subject"), "the agent acts for"),
        (proposal.fields.get("subject"), "the memory is about"),
        ((proposal.fields.get("memory") or {}).get("subject"), "the summary is about"),  # a compaction
    ]
    owners: dict[str, str] = {}
    for subject, part in named:
        if isinstance(subject, dict) and {"kind", "id"} <= set(subject):
            owners.setdefault(f"{subject['kind']}:{subject['id']}", part)
    return owners


def representable_owners(user, proposal: Proposal) -> list[tuple[str, str]]:
    """Whom ``user`` may record a decision on ``proposal`` as made for: (value, label) pairs.

    The owners the proposal itself names, or the person alone. "Deciding for" is
    then a fact the server can stand behind, never free text a request makes up.
    """
    owners = [(owner, f"{owner} ({part})") for owner, part in proposal_owners(proposal).items()]
    username = user.get_username()
    return [*owners, (username, f"yourself ({username})")]


def represented_owner(user, proposal: Proposal, claimed: str) -> str | None:
    """The owner to record for ``claimed`` ("" is the proposal's first owner), or None if not allowed."""
    claimed = claimed.strip()
    allowed = [value for value, _ in representable_owners(user, proposal)]
    if not claimed:
        return allowed[0]
    return claimed if claimed in allowed else None


def review_queue(*, user, order: str = "age", **filters) -> QuerySet[Proposal]:
    """Return the pending proposals that still need ``user``, narrowed by ``filters`` (see ``narrow_queue``).

    Left out: proposals submitted by an agent linked to ``user`` (the
    submitter can never decide them) and those ``user`` already decided in
    their current version (the others' approvals are still missing). Each row
    carries ``approvals_so_far`` on its current digest, for "1 of 2".
    """
    # The tenant ids as a list, not a subquery: with one tenant (the usual reviewer) the
    # planner then walks proposal_queue_*_idx in order and stops at the page size.
    tenant_ids = list(decidable_tenants(user).values_list("pk", flat=True))
    on_current_digest = ReviewDecision.objects.filter(
        proposal=OuterRef("pk"), action_digest=OuterRef("action_digest")
    )
    approvals = (
        on_current_digest.filter(decision=ReviewDecision.Decision.APPROVE)
        .values("proposal")
        .annotate(n=Count("pk"))
        .values("n")
    )
    proposals = (
        Proposal.objects.filter(status=Proposal.Status.PENDING_REVIEW, tenant_id__in=tenant_ids)
        .exclude(submitted_by__user=user)
        .exclude(Exists(on_current_digest.filter(actor=user)))
        .annotate(approvals_so_far=Coalesce(Subquery(approvals), 0))
        .select_related("submitted_by", "tenant")
    )
    return narrow_queue(proposals, **filters).order_by(*QUEUE_ORDERS[order])


def narrow_queue(
    proposals: QuerySet[Proposal],
    *,
    memory_type: str = "",
    scope: str = "",
    risk_level: str = "",
    agent: str = "",
    reason: str = "",  # the id of the rule that routed it here
    older_than_hours: int | None = None,
) -> QuerySet[Proposal]:
    """Narrow a review queue on indexed columns: the review UI and the queue API filter alike."""
    if memory_type:
        proposals = proposals.filter(memory_type=memory_type)
    if scope:
        proposals = proposals.filter(memory_scope=scope)
    if risk_level:
        proposals = proposals.filter(risk_rank=Proposal.RISK_RANKS[risk_level])
    if agent:
        proposals = proposals.filter(submitted_by__name=agent)
    if reason:
        proposals = proposals.filter(matched_rule=reason)
    if older_than_hours:
        proposals = proposals.filter(created_at__lt=timezone.now() - timedelta(hours=older_than_hours))
    return proposals


def count_up_to(queryset: QuerySet, cap: int) -> tuple[int, bool]:
    """Count at most ``cap`` rows; return (count, whether there are more).

    A queue of 100,000 is "1,000+ waiting": counting all of them on every
    page view would cost more than the page itself.
    """
    count = queryset.order_by()[: cap + 1].count()
    return min(count, cap), count > cap


def proposal_for_review(*, user, proposal_id: uuid.UUID) -> Proposal:
    """Return a proposal the person may see; anything else is not found."""
    proposal = (
        Proposal.objects.filter(pk=proposal_id, tenant__in=viewable_tenants(user))
        .select_related("submitted_by", "tenant")
        .first()
    )
    if proposal is None:
        raise ProposalNotFound()
    return proposal


def approving_decisions(proposal: Proposal) -> list[ReviewDecision]:
    """Return the approvals that count: current digest, one per distinct actor, never the submitter."""
    approvals = ReviewDecision.objects.filter(
        proposal=proposal, action_digest=proposal.action_digest, decision=ReviewDecision.Decision.APPROVE
    ).order_by("created_at")
    if proposal.submitted_by.user_id:
        approvals = approvals.exclude(actor_id=proposal.submitted_by.user_id)
    distinct, seen = [], set()
    for decision in approvals:
        if decision.actor_id not in seen:
            seen.add(decision.actor_id)
            distinct.append(decision)
    return distinct


def needing(user, proposals: list[Proposal]) -> set[uuid.UUID]:
    """Return the ids among ``proposals`` that still need ``user``, as the queue would list them.

    Pending review, in a tenant the person may decide, not submitted through
    their agent, not yet decided by them in its current version. At most three
    queries, however many proposals.
    """
    pending = {p.pk: p for p in proposals if p.status == Proposal.Status.PENDING_REVIEW}
    if not pending:
        return set()
    tenants = set(
        decidable_tenants(user)
        .filter(pk__in={p.tenant_id for p in pending.values()})
        .values_list("pk", flat=True)
    )
    candidates = {pk for pk, p in pending.items() if p.tenant_id in tenants}
    if not candidates:
        return set()
    own = set(
        Proposal.objects.filter(pk__in=candidates, submitted_by__user=user).values_list("pk", flat=True)
    )
    decided = {
        proposal_id
        for proposal_id, digest in ReviewDecision.objects.filter(
            proposal_id__in=candidates, actor=user
        ).values_list("proposal_id", "action_digest")
        if digest == pending[proposal_id].action_digest
    }
    return candidates - own - decided


def has_veto(proposal: Proposal) -> bool:
    return ReviewDecision.objects.filter(
        proposal=proposal, action_digest=proposal.action_digest, decision=ReviewDecision.Decision.REJECT
    ).exists()


def decision_history(proposal: Proposal) -> list[ReviewDecision]:
    """Return every decision on the proposal, each marked ``stale`` if made on an older digest."""
    decisions = list(proposal.decisions.select_related("actor").order_by("created_at"))
    for decision in decisions:
        decision.stale = decision.is_stale_for(proposal)
    return decisions


# Waiting-time buckets of the dashboard: (label, lower bound in hours), oldest last.
AGE_BUCKETS = [("under 1 h", 0), ("1–4 h", 1), ("4–24 h", 4), ("1–3 days", 24), ("over 3 days", 72)]
TOP_RULES = 8


@dataclass(frozen=True)
class ReviewerDashboard:
    queue_depth: int
    decided_last_7_days: int
    median_hours_to_decision: float | None
    outcomes_by_day: list[dict]
    waiting_by_age: list[tuple[str, int]]  # (bucket label, proposals waiting for this person)
    by_rule: list[dict]  # {"rule", "waiting", "decided"}, busiest first


def reviewer_dashboard(*, user, days: int = 7) -> ReviewerDashboard:
    """Return what waits for ``user`` and what they decided: queue depth, latency, outcomes, by age, by rule.

    A fixed number of queries, whatever the size of the queue or the history:
    the counts are aggregated by the database, the rules capped at ``TOP_RULES``.
    """
    now = timezone.now()
    since = now - timedelta(days=days)
    # The person's own decisions: the queue is theirs, so are the counts beside it.
    decisions = ReviewDecision.objects.filter(
        actor=user, tenant__in=decidable_tenants(user), created_at__gte=since
    )
    waits = [
        (decided - submitted).total_seconds() / 3600
        for decided, submitted in decisions.values_list("created_at", "proposal__created_at")[:5000]
    ]
    per_day = (
        decisions.annotate(day=TruncDate("created_at"))
        .values("day", "decision")
        .annotate(count=Count("id"))
        .order_by("day")
    )
    today = now.date()
    outcomes = {
        today - timedelta(days=offset): dict.fromkeys(ReviewDecision.Decision.values, 0)
        for offset in range(days - 1, -1, -1)
    }
    for row in per_day:
        if row["day"] in outcomes:
            outcomes[row["day"]][row["decision"]] = row["count"]
    queue = review_queue(user=user)
    return ReviewerDashboard(
        queue_depth=queue.count(),
        decided_last_7_days=len(waits),
        median_hours_to_decision=round(statistics.median(waits), 1) if waits else None,
        outcomes_by_day=[{"day": day, **counts} for day, counts in outcomes.items()],
        waiting_by_age=_waiting_by_age(queue, now),
        by_rule=_by_rule(queue, decisions),
    )


def _waiting_by_age(queue: QuerySet[Proposal], now) -> list[tuple[str, int]]:
    """Count the queue per age bucket in one aggregate query."""
    bounds = [hours for _, hours in AGE_BUCKETS] + [None]
    counts = {}
    for index, ((_, lower), upper) in enumerate(zip(AGE_BUCKETS, bounds[1:], strict=True)):
        window = Q(created_at__lte=now - timedelta(hours=lower))
        if upper is not None:
            window &= Q(created_at__gt=now - timedelta(hours=upper))
        counts[f"bucket_{index}"] = Count("pk", filter=window)
    totals = queue.order_by().aggregate(**counts)
    return [(label, totals[f"bucket_{index}"]) for index, (label, _) in enumerate(AGE_BUCKETS)]


def _by_rule(queue: QuerySet[Proposal], decisions: QuerySet[ReviewDecision]) -> list[dict]:
    """Proposals waiting and decisions made, per routing rule, the busiest ``TOP_RULES`` rules."""
    rows: dict[str, dict] = {}
    waiting = queue.order_by().values("matched_rule").annotate(n=Count("pk"))
    for row in waiting.order_by("-n")[:TOP_RULES]:
        rows.setdefault(row["matched_rule"], {"waiting": 0, "decided": 0})["waiting"] = row["n"]
    decided = decisions.order_by().values("proposal__matched_rule").annotate(n=Count("pk"))
    for row in decided.order_by("-n")[:TOP_RULES]:
        rows.setdefault(row["proposal__matched_rule"], {"waiting": 0, "decided": 0})["decided"] = row["n"]
    ranked = sorted(rows.items(), key=lambda item: (-item[1]["waiting"] - item[1]["decided"], item[0]))
    return [{"rule": rule, **counts} for rule, counts in ranked[:TOP_RULES]]


def dreaming_runs_for_review(*, user) -> QuerySet[DreamingRun]:
    """The Dreaming runs of the tenants this person may view, newest first."""
    return dreaming_runs(tenants=viewable_tenants(user)).select_related("tenant")


def dreaming_run_for_review(*, user, run_id: uuid.UUID) -> DreamingRun:
    """One run the person may view; another tenant's run is not found, like a missing one."""
    run = dreaming_runs_for_review(user=user).filter(pk=run_id).first()
    if run is None:
        raise DreamingRunNotFound()
    return run
