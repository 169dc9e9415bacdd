"""Refusals a proposal submission or withdrawal can meet."""

from core.errors import DomainError, NotFound


class ProposalNotFound(NotFound):
    title = "Proposal not found"


class IdempotencyConflict(DomainError):
    code = "idempotency_conflict"
    status = 409
    title = "This Idempotency-Key was already used with a different body"


class BaseRevisionStale(DomainError):
    code = "base_revision_stale"
    status = 409
    title = "The memory has changed since the proposal was computed"


class NotSubmitter(DomainError):
    code = "not_submitter"
    status = 403
    title = "Only the agent that submitted a proposal may amend or withdraw it"


class AmendmentChangesTarget(DomainError):
    code = "amendment_changes_target"
    status = 400
    title = "An amendment keeps the proposal's action and target memory"


class PublishNotPermitted(DomainError):
    code = "publish_not_permitted"
    status = 403
    title = "Only a person who may publish in this tenant asks to publish or approves it"


class DreamingRunForeign(DomainError):
    code = "dreaming_run_foreign"
    status = 403
    title = "Only the tenant's system agent proposes the actions of its own Dreaming runs"


class DreamingRunNotFound(DomainError):
    code = "dreaming_run_not_found"
    status = 404
    title = "No such Dreaming run"


class SecretDetected(DomainError):
    """Text holding a credential or key that failed validation too: refused with its findings only.

    A well-formed proposal holding a secret is stored denied (rule ``deny-secret``, the same
    code); one that is also malformed is refused whole, so no validation message can quote it.
    """

    code = "secret_detected"
    status = 422
    title = "The proposal holds a credential or key; it was not stored"


class DedupeKeyReserved(DomainError):
    code = "validation_error"
    status = 400
    title = "Dedupe keys starting with 'statement:' are derived by Custodian, never sent"

    def __init__(self) -> None:
        super().__init__(errors={"dedupe_key": [self.title]})
