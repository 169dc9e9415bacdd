"""Query filters of the reviewer endpoints."""

import django_filters

from core.api.filters import CharFilter, ChoiceFilter, IntegerFilter
from memory_core.models import Memory
from proposals.models import Proposal
from reviews.selectors import narrow_queue


class ReviewQueueFilter(django_filters.FilterSet):
    """Validated and documented here; applied by ``narrow_queue``, as the review UI's filters are."""

    type = ChoiceFilter(choices=Memory.Type.choices)
    scope = ChoiceFilter(choices=Memory.Scope.choices)
    risk_level = ChoiceFilter(choices=[(rank, rank) for rank in Proposal.RISK_RANKS])
    agent = CharFilter(max_length=64, help_text="name of the submitting agent")
    reason = CharFilter(max_length=100, help_text="id of the rule that routed the proposal to review")
    older_than_hours = IntegerFilter(min_value=0, max_value=24 * 3650)

    class Meta:
        model = Proposal
        fields = ["type", "scope", "risk_level", "agent", "reason", "older_than_hours"]

    def filter_queryset(self, queryset):
        given = {name: value for name, value in self.form.cleaned_data.items() if value not in ("", None)}
        given["memory_type"] = given.pop("type", "")
        return narrow_queue(queryset, **given)
