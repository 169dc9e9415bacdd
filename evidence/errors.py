from core.errors import DomainError


class EvidenceSourceExists(DomainError):
    code = "evidence_exists"
    status = 409
    title = "Evidence with this kind and external_ref already exists"


class InvalidationNotPermitted(DomainError):
    code = "permission_denied"
    status = 403
    title = "This agent may not invalidate evidence (ask an operator to allow it)"
