"""Refusals a review decision can meet."""

from core.errors import DomainError


class DecisionNotPermitted(DomainError):
    code = "permission_denied"
    status = 403
    title = "You may view this proposal but not decide it"


class SelfApprovalForbidden(DomainError):
    code = "self_approval"
    status = 403
    title = "The submitter of a proposal cannot decide it"


class NotUnderReview(DomainError):
    code = "not_under_review"
    status = 409
    title = "The proposal is not waiting for review"


class StaleDigest(DomainError):
    code = "stale_digest"
    status = 409
    title = "The proposal changed since you looked at it; review it again"


class ReviewWindowClosed(DomainError):
    code = "review_expired"
    status = 409
    title = "The review window for this proposal has closed"


class AlreadyDecided(DomainError):
    code = "already_decided"
    status = 409
    title = "You already decided this version of the proposal"


class NotLowRisk(DomainError):
    code = "not_low_risk"
    status = 409
    title = "Only low-risk proposals can be approved in bulk"


class ReasonRequired(DomainError):
    code = "reason_required"
    status = 400
    title = "Every decision needs a reason"


class OwnerNotRepresentable(DomainError):
    code = "owner_not_representable"
    status = 403
    title = "A decision is made for the proposal's owner or for yourself, not for someone it does not name"


class NotAConflict(DomainError):
    code = "not_a_conflict"
    status = 400
    title = "Only proposals that conflict with this one can be decided with it"


class DecidedTogetherRefused(DomainError):
    """One item of a decide-together was refused, so none was recorded (``cause`` is its code)."""

    code = "decided_together_refused"
    status = 409
    title = "One of the proposals could not be decided, so none was"
