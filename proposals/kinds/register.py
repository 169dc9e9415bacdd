"""``register``: an operator's request to publish a registration candidate (not a memory action)."""

from proposals.kinds.base import Freezing, Prepared
from registrations.selectors import registration_candidate


def prepare_register(freezing: Freezing) -> Prepared:
    """Freeze a publish request: the candidate's id, fingerprint and base, and who asked.

    The fingerprint is in the action digest, so a candidate changed after
    its reviewers saw it no longer matches what they approved.
    """
    proposal, payload = freezing.proposal, freezing.payload
    candidate = registration_candidate(tenant_id=freezing.tenant_id, candidate_id=payload["registration_id"])
    proposal.target_id = candidate.id
    proposal.base_revision = candidate.base_version
    proposal.fields = {
        "registration_id": str(candidate.id),
        "fingerprint": candidate.fingerprint,
        "base_version": candidate.base_version,
        "version": candidate.base_version + 1,
        "requested_by": payload["requested_by"],
        "reason": payload["reason"],
    }
    return Prepared("new")
