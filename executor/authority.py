"""Who allowed a release, re-checked by the executor when it applies it.

The web role must write decisions, releases and outbox rows, so the database
cannot tell a real release from one written with only the web role's
credentials. The executor re-checks: the policy verdict (classification,
required approvals, gates) and the action it covers carry the seal the
submitting process put on them, and a ``review_required`` proposal has enough
sealed approvals on its current digest, from distinct people who may decide
in its tenant *now* and are not its submitter, and no reject on that digest.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from guardian.models import GroupObjectPermission, UserObjectPermission

from executor.models import Receipt
from proposals.models import Proposal
from reviews.models import ReviewDecision
from tenancy.models import Agent
from tenancy.selectors import DECIDE, PUBLISH

Classification = Proposal.Classification
ASKED_BY_OPERATORS = (Proposal.Action.REGISTER, Proposal.Action.ERASE)
RELEASABLE = (Classification.AUTO_APPLY, Classification.POLICY_GATED, Classification.REVIEW_REQUIRED)


@dataclass(frozen=True)
class Authority:
    """Whether a release was allowed: a refusal (outcome and reason) or the approvals it rests on."""

    outcome: str = ""
    reason: str = ""
    decision_ids: list[str] = field(default_factory=list)

    @property
    def allowed(self) -> bool:
        return not self.outcome


def release_authorities(proposals: list[Proposal]) -> dict[Any, Authority]:
    """Return, per proposal of a batch, whether policy and people allowed its release.

    At most four queries for the batch's proposals under review, whatever
    their number, and none when there are none.
    """
    reviewed = [p for p in proposals if p.classification == Classification.REVIEW_REQUIRED]
    decisions = _decisions(reviewed)
    submitters = dict(
        Agent.objects.filter(pk__in={p.submitted_by_id for p in reviewed}).values_list("pk", "user_id")
        if reviewed
        else []
    )
    all_decisions = [d for ds in decisions.values() for d in ds]
    deciders = _deciders(all_decisions, {p.tenant_id for p in reviewed})
    publishing = [p for p in reviewed if p.action == Proposal.Action.REGISTER]
    publishers = (
        _deciders(all_decisions, {p.tenant_id for p in publishing}, permission=PUBLISH)
        if publishing
        else set()
    )
    return {
        p.pk: _authority(p, decisions.get(p.pk, []), submitters.get(p.submitted_by_id), deciders, publishers)
        for p in proposals
    }


def _authority(
    proposal: Proposal,
    decisions: list[ReviewDecision],
    submitter: Any,
    deciders: set[tuple[Any, str]],
    publishers: set[tuple[Any, str]],
) -> Authority:
    if not proposal.has_sealed_verdict():
        return Authority(
            Receipt.Outcome.UNAUTHORISED_RELEASE, "the verdict or action is not as policy sealed it"
        )
    if proposal.classification not in RELEASABLE:
        return Authority(Receipt.Outcome.UNAUTHORISED_RELEASE, f"a {proposal.classification} proposal")
    if proposal.classification != Classification.REVIEW_REQUIRED:
        return Authority()
    current = [d for d in decisions if d.action_digest == proposal.action_digest]
    if any(d.decision == ReviewDecision.Decision.REJECT for d in current):
        return Authority(Receipt.Outcome.APPROVALS_MISSING, "vetoed by a reject on the current digest")
    counted: dict[Any, ReviewDecision] = {}
    for decision in current:
        actor = decision.actor
        if (
            decision.decision == ReviewDecision.Decision.APPROVE
            and actor.pk not in counted
            and actor.pk != submitter
            and actor.is_active
            and (actor.is_superuser or (actor.pk, str(proposal.tenant_id)) in deciders)
            and not _asked_for_it(proposal, actor)
            and _may_publish(proposal, actor, publishers)
            and decision.has_valid_seal()
        ):
            counted[actor.pk] = decision
    needed = max(proposal.required_approvals, 1)
    if len(counted) < needed:
        return Authority(
            Receipt.Outcome.UNAUTHORISED_RELEASE,
            f"{len(counted)} of {needed} approvals on the current digest are sealed, by people who "
            "may decide in this tenant now and did not submit it",
        )
    return Authority(decision_ids=[str(d.id) for d in counted.values()])


def _asked_for_it(proposal: Proposal, actor: Any) -> bool:
    """The operator who asked for a publication or an erasure is never one of its approvers."""
    asked_by = proposal.fields.get("requested_by") if proposal.action in ASKED_BY_OPERATORS else None
    return asked_by is not None and asked_by == actor.pk


def _may_publish(proposal: Proposal, actor: Any, publishers: set[tuple[Any, str]]) -> bool:
    """A registration is published only on approvals by people who may publish now."""
    if proposal.action != Proposal.Action.REGISTER:
        return True
    return actor.is_superuser or (actor.pk, str(proposal.tenant_id)) in publishers


def _decisions(reviewed: list[Proposal]) -> dict[Any, list[ReviewDecision]]:
    by_proposal = defaultdict(list)
    if reviewed:
        rows = ReviewDecision.objects.filter(proposal_id__in=[p.pk for p in reviewed]).select_related("actor")
        for decision in rows.order_by("created_at", "id"):
            by_proposal[decision.proposal_id].append(decision)
    return by_proposal


def _deciders(
    decisions: list[ReviewDecision], tenant_ids: set[Any], permission: str = DECIDE
) -> set[tuple[Any, str]]:
    """Return (user id, tenant id) pairs: deciders holding ``permission`` there, directly or by group."""
    actor_ids = {d.actor_id for d in decisions}
    if not actor_ids:
        return set()
    app_label, codename = permission.split(".")
    on_tenants = {
        "content_type__app_label": "tenancy",
        "content_type__model": "tenant",
        "permission__content_type__app_label": app_label,
        "permission__codename": codename,
        "object_pk__in": [str(tenant_id) for tenant_id in tenant_ids],
    }
    direct = UserObjectPermission.objects.filter(user_id__in=actor_ids, **on_tenants)
    grouped = GroupObjectPermission.objects.filter(group__user__in=actor_ids, **on_tenants)
    return set(direct.values_list("user_id", "object_pk")) | set(
        grouped.values_list("group__user", "object_pk")
    )
