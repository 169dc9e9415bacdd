"""Query filters of the proposal list."""

import django_filters

from core.api.filters import ChoiceFilter
from proposals.models import Proposal


class ProposalFilter(django_filters.FilterSet):
    status = ChoiceFilter(choices=Proposal.Status.choices)
    classification = ChoiceFilter(choices=Proposal.Classification.choices)

    class Meta:
        model = Proposal
        fields = ["status", "classification"]
