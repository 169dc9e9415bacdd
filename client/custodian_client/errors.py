"""Typed errors: one class per stable problem ``code`` Custodian answers, under one base.

A code this version does not know still raises :class:`CustodianError` (or the class for its
HTTP status family), with ``code`` set, so callers never parse bodies themselves.
"""

from __future__ import annotations

from typing import Any


class CustodianError(Exception):
    """A problem+json answer from Custodian (or a transport failure with ``status`` 0)."""

    code = "error"

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        body: dict[str, Any] | None = None,
        *,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {detail}" if status else f"{code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.body: dict[str, Any] = body or {}
        self.retry_after = retry_after  # seconds the server asked to wait (Retry-After), if it said


class BadRequest(CustodianError):
    """The request was refused as malformed or invalid (4xx not covered below)."""


class ValidationFailed(BadRequest):
    """``validation_error``: ``errors`` names each field."""

    code = "validation_error"

    @property
    def errors(self) -> Any:
        return self.body.get("errors", {})


class ContentInvalid(ValidationFailed):
    """``content_invalid`` (422): the tenant's registered schema for the type refuses the content.

    ``errors`` lists each ``path`` (``/content/…``), ``kind`` and ``message``; the body also names
    the ``registration_version`` that refused it.
    """

    code = "content_invalid"

    @property
    def errors(self) -> Any:
        return self.body.get("errors", [])

    @property
    def registration_version(self) -> int | None:
        return self.body.get("registration_version")


class NotAuthenticated(CustodianError):
    code = "not_authenticated"


class PermissionDenied(CustodianError):
    code = "permission_denied"


class NotFound(CustodianError):
    code = "not_found"


class Conflict(CustodianError):
    """A 409: the state moved under the request (stale base revision, invalid transition, …)."""


class Throttled(CustodianError):
    """429, still refused after the client's bounded retries."""

    code = "throttled"


class ServiceUnavailable(CustodianError):
    """503, still failing after the client's bounded retries (or no connection at all)."""

    code = "service_unavailable"


class ProposalDenied(CustodianError):
    """A proposal the policy denied (422): stored for audit, never applied.

    ``code`` is the deny rule's reason; ``proposal_id`` and ``reason_codes`` come with it.
    """

    @property
    def proposal_id(self) -> str:
        return str(self.body.get("proposal_id", ""))

    @property
    def reason_codes(self) -> list[str]:
        return list(self.body.get("reason_codes", []))


# The stable codes of Custodian's REST API (docs/api.md).
class MalformedJson(BadRequest):
    """The body is not strict JSON."""

    code = "malformed_json"


class PayloadTooLarge(BadRequest):
    """The body is over the server's limit."""

    code = "payload_too_large"


class LengthRequired(BadRequest):
    """A chunked body: send Content-Length."""

    code = "length_required"


class InvalidCursor(BadRequest):
    """The cursor is not one this API issued."""

    code = "invalid_cursor"


class InvalidValue(BadRequest):
    """A value is out of range for storage."""

    code = "invalid_value"


class IdempotencyKeyRequired(BadRequest):
    """Proposals need an Idempotency-Key."""

    code = "idempotency_key_required"


class UnsupportedMediaType(BadRequest):
    """Send application/json."""

    code = "unsupported_media_type"


class MethodNotAllowed(BadRequest):
    """The endpoint does not take this method."""

    code = "method_not_allowed"


class TenantMismatch(PermissionDenied):
    """Tenant and actor come from the credential."""

    code = "tenant_mismatch"


class ActingForNotGranted(PermissionDenied):
    """No operator grant lets this agent act for that subject."""

    code = "acting_for_not_granted"


class NotSubmitter(PermissionDenied):
    """Only the submitting agent may do this."""

    code = "not_submitter"


class ReservedIdentity(PermissionDenied):
    """custodian-* names are Custodian's own."""

    code = "reserved_identity"


class SelfApprovalForbidden(PermissionDenied):
    """A reviewer may not approve their own."""

    code = "self_approval"


class OwnerNotRepresentable(PermissionDenied):
    """A decision is for an owner the proposal names, or for the reviewer alone."""

    code = "owner_not_representable"


class PublishNotPermitted(PermissionDenied):
    """Publishing a registration needs ``publish_registration`` in the tenant."""

    code = "publish_not_permitted"


class ErasureNotAllowed(PermissionDenied):
    """Erasing a subject needs a live grant to act for it (or an operator, in the admin)."""

    code = "erasure_not_allowed"


class ErasureNotFound(NotFound):
    """No erasure of that id that you asked for (another agent's reads as none)."""

    code = "erasure_not_found"


class ErasureNotCertified(Conflict):
    """The erasure has not been applied yet, so it has no certificate."""

    code = "erasure_not_certified"


class RecallNotFound(NotFound):
    """Not a recall of this agent."""

    code = "recall_not_found"


class ItemNotServed(BadRequest):
    """The recall did not serve that memory revision."""

    code = "item_not_served"


class FeedbackAlreadyGiven(Conflict):
    """One vote per memory revision."""

    code = "feedback_already_given"


class IdempotencyConflict(Conflict):
    """The key was used before with a different body."""

    code = "idempotency_conflict"


class BaseRevisionStale(Conflict):
    """The memory moved past base_revision."""

    code = "base_revision_stale"


class InvalidTransition(Conflict):
    """The lifecycle does not allow this move."""

    code = "invalid_transition"


class AlreadyDecided(Conflict):
    """The proposal was decided already."""

    code = "already_decided"


class StaleDigest(Conflict):
    """The proposal changed since it was read."""

    code = "stale_digest"


class NotUnderReview(Conflict):
    """The proposal is not waiting for review."""

    code = "not_under_review"


class EvidenceMismatch(ProposalDenied):
    """Cited evidence is unknown or its hash differs."""

    code = "evidence_mismatch"


class EvidenceInvalid(ProposalDenied):
    """Cited evidence is superseded or invalidated."""

    code = "evidence_invalid"


class TargetNotFound(ProposalDenied):
    """The target memory does not exist."""

    code = "target_not_found"


class TargetNotActive(ProposalDenied):
    """The target memory is not active."""

    code = "target_not_active"


class DuplicateOfActiveMemory(ProposalDenied):
    """An active memory holds the dedupe key (see ``held_by``)."""

    code = "duplicate_of_active_memory"


class ContradictsActiveMemory(ProposalDenied):
    """The memory contradicts an active one."""

    code = "contradicts_active_memory"


class SecretDetected(ProposalDenied):
    """``secret_detected`` (422): the admission firewall found a credential or key; nothing holds it.

    ``findings`` names each (``detector``, ``field`` path, ``kind``), never the secret. A proposal
    denied so has a ``proposal_id`` (stored for audit, its text withheld); evidence, or a proposal
    that was malformed too, was refused whole and has none.
    """

    code = "secret_detected"

    @property
    def findings(self) -> list[dict[str, Any]]:
        return list(self.body.get("findings", []))


class EvidenceExists(Conflict):
    """Evidence with this kind and external_ref is registered already (add a revision instead)."""

    code = "evidence_exists"


class ReviewExpired(Conflict):
    """The review window for this proposal has closed."""

    code = "review_expired"


class ReasonRequired(BadRequest):
    """Every review decision needs a reason."""

    code = "reason_required"


class AmendmentChangesTarget(BadRequest):
    """An amendment keeps the proposal's action and target memory."""

    code = "amendment_changes_target"


CODE_CLASSES: dict[str, type[CustodianError]] = {
    "validation_error": ValidationFailed,
    "content_invalid": ContentInvalid,
    "evidence_exists": EvidenceExists,
    "review_expired": ReviewExpired,
    "reason_required": ReasonRequired,
    "amendment_changes_target": AmendmentChangesTarget,
    "not_authenticated": NotAuthenticated,
    "permission_denied": PermissionDenied,
    "not_found": NotFound,
    "throttled": Throttled,
    "service_unavailable": ServiceUnavailable,
    "malformed_json": MalformedJson,
    "payload_too_large": PayloadTooLarge,
    "length_required": LengthRequired,
    "invalid_cursor": InvalidCursor,
    "invalid_value": InvalidValue,
    "idempotency_key_required": IdempotencyKeyRequired,
    "unsupported_media_type": UnsupportedMediaType,
    "method_not_allowed": MethodNotAllowed,
    "tenant_mismatch": TenantMismatch,
    "acting_for_not_granted": ActingForNotGranted,
    "not_submitter": NotSubmitter,
    "reserved_identity": ReservedIdentity,
    "self_approval": SelfApprovalForbidden,
    "owner_not_representable": OwnerNotRepresentable,
    "publish_not_permitted": PublishNotPermitted,
    "erasure_not_allowed": ErasureNotAllowed,
    "erasure_not_found": ErasureNotFound,
    "erasure_not_certified": ErasureNotCertified,
    "recall_not_found": RecallNotFound,
    "item_not_served": ItemNotServed,
    "feedback_already_given": FeedbackAlreadyGiven,
    "idempotency_conflict": IdempotencyConflict,
    "base_revision_stale": BaseRevisionStale,
    "invalid_transition": InvalidTransition,
    "already_decided": AlreadyDecided,
    "stale_digest": StaleDigest,
    "not_under_review": NotUnderReview,
    "evidence_mismatch": EvidenceMismatch,
    "evidence_invalid": EvidenceInvalid,
    "target_not_found": TargetNotFound,
    "target_not_active": TargetNotActive,
    "duplicate_of_active_memory": DuplicateOfActiveMemory,
    "contradicts_active_memory": ContradictsActiveMemory,
    "secret_detected": SecretDetected,
}

_STATUS_CLASSES: dict[int, type[CustodianError]] = {
    401: NotAuthenticated,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    429: Throttled,
    503: ServiceUnavailable,
}


def error_for(status: int, body: Any, retry_after: float | None = None) -> CustodianError:
    """Build the typed error for a problem+json (or any non-2xx) answer."""
    problem = body if isinstance(body, dict) else {}
    code = str(problem.get("code") or "error")
    detail = str(problem.get("detail") or problem.get("title") or f"HTTP {status}")
    cls = CODE_CLASSES.get(code)
    if cls is None:
        if status == 422 and "proposal_id" in problem:
            cls = ProposalDenied
        else:
            cls = _STATUS_CLASSES.get(status, BadRequest if 400 <= status < 500 else CustodianError)
    return cls(status, code, detail, problem, retry_after=retry_after)


class WaitTimeout(CustodianError, TimeoutError):
    """No receipt came within the bounded wait; the proposal may still be applied later."""


class ProposalClosed(CustodianError):
    """The proposal ended without a receipt (rejected, expired, withdrawn or denied)."""
