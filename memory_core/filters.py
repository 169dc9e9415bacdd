"""Query filters of the audit event list, each on an indexed column."""

import uuid

import django_filters
from django.db.models import Exists, OuterRef, Q, QuerySet

from core.api.filters import CharFilter, ChoiceFilter, DateTimeFilter
from memory_core.models import AccessEvent, AccessEventItem


class AccessEventFilter(django_filters.FilterSet):
    memory = django_filters.UUIDFilter(method="filter_memory", help_text="read directly or served in results")
    actor = CharFilter(field_name="agent__name", max_length=64)
    action = ChoiceFilter(choices=AccessEvent.Action.choices)
    correlation_id = CharFilter(max_length=200)
    since = DateTimeFilter(field_name="created_at", lookup_expr="gte")

    class Meta:
        model = AccessEvent
        fields = ["memory", "actor", "action", "correlation_id", "since"]

    def filter_memory(self, queryset: QuerySet, name: str, value: uuid.UUID) -> QuerySet:
        """Keep the events that read the memory directly or served it in search results."""
        served = AccessEventItem.objects.filter(event=OuterRef("pk"), memory_id=value)
        return queryset.filter(Q(target_memory_id=value) | Exists(served))
