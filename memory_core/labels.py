"""What a person reads instead of column names and content keys.

One map for the review UI and the admin. Content labels come from the
registration (``registrations``): pass the tenant's active one, or get the
built-in default's. Unknown names fall
back to their words ("object_entity" → "Object entity").
"""

from memory_core.models import Memory
from registrations.compiled import DEFAULT, ActiveRegistration
from registrations.selectors import active_registration

FIELD_LABELS = {
    "subject": "About",
    "scope": "Visible in",
    "type": "Kind of memory",
    "sensitivity": "Sensitivity",
    "confidence": "Confidence",
    "retention_policy": "Kept",
    "ttl_seconds": "Time to live (seconds)",
    "expires_at": "Expires",
    "valid_from": "True from",
    "valid_to": "True until",
    "dedupe_key": "Slot (dedupe key)",
}


def content_labels(
    registration: ActiveRegistration = DEFAULT, memory_type: str | None = None
) -> dict[str, str]:
    """Return the content labels of one registered type, or of every type (first type's wording wins)."""
    types = registration.document["types"]
    chosen = [memory_type] if memory_type in types else list(types)
    labels: dict[str, str] = {}
    for name in chosen:
        labels = {**types[name]["labels"], **labels}
    return labels


CONTENT_LABELS = content_labels()


def field_label(
    name: str, registration: ActiveRegistration | None = None, memory_type: str | None = None
) -> str:
    """Label a memory field, or a content key written ``content.<key>`` (from the registration's labels)."""
    if name.startswith("content."):
        key = name.removeprefix("content.")
        labels = CONTENT_LABELS if registration is None else content_labels(registration, memory_type)
        return labels.get(key) or _words(key)
    return FIELD_LABELS.get(name) or _words(name)


def tenant_field_label(name: str, *, tenant_id, memory_type: str | None = None) -> str:
    """Label a field as the tenant's active registration words it (one cache read when warm)."""
    return field_label(name, active_registration(tenant_id=tenant_id), memory_type)


def choice_label(field: str, value: str) -> str:
    """Label a stored choice of a memory field ("semantic_fact" → "Semantic fact")."""
    choices = {"type": Memory.Type, "scope": Memory.Scope, "sensitivity": Memory.Sensitivity}.get(field)
    if choices is not None and value in choices.values:
        return _words(value)
    return value


def _words(name: str) -> str:
    return name.replace("_", " ").capitalize()
