"""What a person reads instead of column names and content keys.

One map for the review UI and the admin; a tenant's registration (its
per-type labels) will take precedence once it exists. Unknown names fall
back to their words ("object_entity" → "Object entity").
"""

from memory_core.models import Memory

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
CONTENT_LABELS = {
    "statement": "Statement",
    "summary": "Summary",
    "factor": "Factor",
    "universe": "Universe",
    "horizon": "Horizon",
    "metric": "Metric",
    "value": "Value",
    "conclusion": "Conclusion",
    "preference_key": "Preference",
    "preference_value": "Preferred",
    "fact_key": "Fact",
    "fact_value": "Value",
    "occurred_at": "When",
    "run_id": "Run",
    "session_id": "Session",
    "task_id": "Task",
    "uri": "Link",
}


def field_label(name: str) -> str:
    """Label a memory field, or a content key written ``content.<key>``."""
    if name.startswith("content."):
        key = name.removeprefix("content.")
        return CONTENT_LABELS.get(key) or _words(key)
    return FIELD_LABELS.get(name) or _words(name)


def choice_label(field: str, value: str) -> str:
    """Label a stored choice of a memory field ("semantic_fact" → "Semantic fact")."""
    choices = {"type": Memory.Type, "scope": Memory.Scope, "sensitivity": Memory.Sensitivity}.get(field)
    if choices is not None and value in choices.values:
        return _words(value)
    return value


def _words(name: str) -> str:
    return name.replace("_", " ").capitalize()
