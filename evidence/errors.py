from core.errors import DomainError


class EvidenceSourceExists(DomainError):
    code = "evidence_exists"
    status = 409
    title = "Evidence with this kind and external_ref already exists"


class InvalidationNotPermitted(DomainError):
    code = "permission_denied"
    status = 403
    title = "This agent may not invalidate evidence (ask an operator to allow it)"


class SecretInEvidence(DomainError):
    """The content holds a credential or key; nothing was stored. ``findings`` names where, never what."""

    code = "secret_detected"
    status = 422
    title = "The content holds a credential or key; it was not stored"
