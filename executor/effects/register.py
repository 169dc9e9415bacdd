"""``register``: publish the exact registration candidate that was reviewed, if it is still additive.

A refused publish returns the candidate to draft, so the operator may retry.
"""

import uuid
from collections.abc import Iterable
from typing import Any

from executor.effects.base import Applied, ApplyContext, Check, Effect, Outcome
from proposals.models import Proposal
from registrations.document import fingerprint
from registrations.evolution import breaking_changes
from registrations.models import Registration
from registrations.publication import activate
from registrations.services import return_to_draft


class RegisterEffect(Effect):
    def verify(self, ctx: ApplyContext, moved_by_run: frozenset[str]) -> Check | None:
        """Publish only the exact candidate reviewed, on the version it extends, if still additive."""
        proposal, candidate, active = ctx.proposal, ctx.registration.candidate, ctx.registration.active
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

    def apply(self, ctx: ApplyContext, receipt_id: uuid.UUID) -> Applied:
        proposal, registration = ctx.proposal, ctx.registration
        assert registration.candidate is not None  # verify refused a missing one
        previous = activate(
            candidate=registration.candidate, version=proposal.fields["version"], receipt_id=receipt_id
        )
        effects = {
            "registration": {
                "published_version": proposal.fields["version"],
                "fingerprint": proposal.fields["fingerprint"],
                "superseded_version": previous.version if previous else registration.active.version,
            }
        }
        return Applied(ctx.memory, effects)

    def release_refused(self, ctx: ApplyContext) -> None:
        return_to_draft(candidate_id=ctx.proposal.target_id)  # not published: the operator may retry


def lock_candidates(proposals: Iterable[Proposal]) -> dict[Any, Registration]:
    """Lock the registration candidates the batch's publish proposals name (none: no query)."""
    wanted = [p.target_id for p in proposals if p.action == Proposal.Action.REGISTER]
    if not wanted:
        return {}
    locked = Registration.objects.select_for_update().filter(pk__in=wanted).order_by("pk")
    return {candidate.pk: candidate for candidate in locked}
