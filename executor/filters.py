"""Query filters of the receipt list."""

import django_filters

from executor.models import Receipt


class ReceiptFilter(django_filters.FilterSet):  # type: ignore[misc]  # django-filter ships no types
    proposal = django_filters.UUIDFilter(field_name="proposal_id")
    memory = django_filters.UUIDFilter(field_name="memory_id")
    dreaming_run = django_filters.UUIDFilter(field_name="proposal__dreaming_run_id")

    class Meta:
        model = Receipt
        fields = ["proposal", "memory", "dreaming_run"]
