"""Template filters for human labels (``memory_core.labels``); the raw name stays on hover."""

from django import template
from django.utils.html import format_html

from memory_core.labels import choice_label, field_label, tenant_field_label
from memory_core.read_policy import mode_label

register = template.Library()


@register.filter
def labelled_field(name: str) -> str:
    return format_html('<span title="{}">{}</span>', name, field_label(name))


@register.filter
def labelled_for(name: str, proposal) -> str:
    """Label a field of ``proposal``'s memory as its tenant's active registration words it."""
    label = tenant_field_label(name, tenant_id=proposal.tenant_id, memory_type=proposal.memory_type or None)
    return format_html('<span title="{}">{}</span>', name, label)


@register.filter
def labelled_choice(value: str, field: str) -> str:
    return format_html('<span title="{}">{}</span>', value, choice_label(field, value))


@register.filter
def return_mode(mode: str) -> str:
    """Name a read view in words (``memory_core.read_policy.MODE_LABELS``); the mode stays on hover."""
    return format_html('<span title="{}">{}</span>', mode, mode_label(mode))
