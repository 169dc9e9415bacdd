from core.errors import DomainError


class EvidenceSourceExists(DomainError):
    code = "evidence_exists"
    status = 409
    title = "Evidence with this kind and external_ref already exists"
