"""The one base class for domain errors.

Services raise subclasses of :class:`DomainError`; only the API exception
handler (``core.api.problems``) knows how they become HTTP responses.
"""

from typing import Any


class DomainError(Exception):
    """A refusal with a stable machine ``code``, an HTTP ``status`` and a ``title``."""

    code = "domain_error"
    status = 400
    title = "Request refused"

    # Keys of the problem+json body itself; an extra named like one would clobber it.
    RESERVED_EXTRAS = frozenset({"type", "title", "status", "code", "detail"})

    def __init__(self, detail: str = "", **extra: Any) -> None:
        if clash := self.RESERVED_EXTRAS & extra.keys():
            raise TypeError(f"{type(self).__name__}: extras may not be named {sorted(clash)}")
        super().__init__(detail or self.title)
        self.detail = detail or self.title
        self.extra = extra


class NotFound(DomainError):
    """The object does not exist for this caller (other tenants' objects included)."""

    code = "not_found"
    status = 404
    title = "Not found"


class TenantMismatch(DomainError):
    """The body names a tenant or actor other than the credential's."""

    code = "tenant_mismatch"
    status = 403
    title = "Tenant and actor come from the credential"
