"""Refusals of registration candidates, each with a stable code."""

from core.errors import DomainError


class InvalidRegistration(DomainError):
    """The candidate document is not a well-formed, strict registration."""

    code = "registration_invalid"
    status = 422
    title = "The registration document is not valid"


class NotAdditive(DomainError):
    """The candidate changes the active registration in a way consumers could not absorb."""

    code = "registration_not_additive"
    status = 422
    title = "A registration may only add optional properties"


class CandidateNotEditable(DomainError):
    code = "registration_not_editable"
    status = 409
    title = "Only a draft candidate can be edited"


class CandidateNotValidated(DomainError):
    code = "registration_not_validated"
    status = 409
    title = "The candidate was not validated as it is now, or its validation failed"


class ContentInvalid(DomainError):
    """Memory content that the tenant's registered schema for its type refuses."""

    code = "content_invalid"
    status = 422
    title = "The content does not match the registered schema for its type"
