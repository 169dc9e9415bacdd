"""Per-type validation of a memory's ``content``, against the tenant's registration.

The schemas are data: each tenant's registration (``registrations``) holds a
strict JSON Schema per type, and the built-in default is what these
serializers used to say. Every type requires a non-blank ``statement``, and
every type's schema is closed: content of one kind cannot travel under another type's rules (a
factor conclusion's ``factor``/``universe``/``metric`` fields are refused
on an episodic event, which policy lets through with lighter checks). The
typed schemas follow MGP (preference, semantic_fact, procedural_rule,
relationship); ``semantic_fact`` also carries the quant fields a factor
conclusion needs.
"""

from typing import Any

from core.errors import DomainError
from registrations.compiled import DEFAULT, ActiveRegistration
from registrations.errors import ContentInvalid


class InvalidContent(DomainError):
    code = "validation_error"
    status = 400
    title = "Invalid memory content"


def validate_content(memory_type: str, content: Any, registration: ActiveRegistration = DEFAULT) -> dict:
    """Return ``content`` unchanged if the registered schema of ``memory_type`` accepts it; raise otherwise.

    The stored content is the submitted JSON, never a coerced copy, so the
    action digest covers exactly what the agent sent. A refusal
    (``ContentInvalid``, 422 ``content_invalid``) lists each failing JSON
    pointer and the registration version that refused it.
    """
    if not isinstance(content, dict):
        raise InvalidContent(errors={"content": ["Must be an object."]})
    problems = registration.content_problems(memory_type, content)
    if problems:
        raise ContentInvalid(
            errors=problems, registration_version=registration.version, memory_type=memory_type
        )
    return content


def validate_retention(fields: dict) -> None:
    """MGP's retention semantics: time_bound memories carry a TTL, persistent ones never do."""
    has_ttl = bool(fields.get("ttl_seconds") or fields.get("expires_at"))
    policy = fields.get("retention_policy")
    if policy == "persistent" and has_ttl:
        raise InvalidContent(
            errors={"retention_policy": ["Persistent memories have no TTL; use time_bound."]}
        )
    if policy == "time_bound" and not has_ttl:
        raise InvalidContent(
            errors={"retention_policy": ["time_bound memories need ttl_seconds or expires_at."]}
        )
