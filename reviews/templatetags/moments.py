"""When something happened, as a person says it ("just now", "3 hours ago", "2 days from now")."""

from datetime import UTC, datetime, timedelta

from django import template
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.utils import timezone
from django.utils.html import format_html

register = template.Library()

JUST_NOW = timedelta(minutes=1)  # below this, counting seconds reads as noise


def relative_words(moment: datetime, *, now: datetime | None = None) -> str:
    """The words for ``moment`` seen from ``now``; Django's ``naturaltime`` past the first minute."""
    now = now or timezone.now()
    if abs(now - moment) < JUST_NOW:
        return "just now"
    return str(naturaltime(moment))


@register.filter
def relative_time(moment: datetime | None) -> str:
    """A ``<time>`` element saying it in words, the exact UTC instant on hover and for machines."""
    if moment is None:
        return ""
    exact = moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return format_html(
        '<time datetime="{}" title="{}">{}</time>', moment.isoformat(), exact, relative_words(moment)
    )
