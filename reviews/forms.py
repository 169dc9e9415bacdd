"""Forms of the review UI; they validate, the services decide."""

import uuid
from typing import cast

from django import forms

from memory_core.models import Memory
from proposals.models import Proposal
from reviews.models import ReviewDecision
from reviews.selectors import QUEUE_ORDERS

_ANY = [("", "any")]


class QueueFilterForm(forms.Form):
    type = forms.ChoiceField(choices=_ANY + Memory.Type.choices, required=False)
    scope = forms.ChoiceField(choices=_ANY + Memory.Scope.choices, required=False)
    risk_level = forms.ChoiceField(choices=_ANY + [(r, r) for r in Proposal.RISK_RANKS], required=False)
    agent = forms.CharField(max_length=64, required=False)
    reason = forms.CharField(max_length=100, required=False, label="Routed by rule")
    older_than_hours = forms.IntegerField(
        min_value=0, max_value=24 * 3650, required=False, label="Older than (h)"
    )
    order = forms.ChoiceField(
        choices=[("age", "oldest first"), ("-age", "newest first"), ("risk", "highest risk first")],
        required=False,
    )

    def queue_filters(self) -> dict:
        """Return keyword arguments for ``review_queue`` (empty when the form is invalid)."""
        if not self.is_valid():
            return {}
        data = dict(self.cleaned_data)
        data["memory_type"] = data.pop("type")
        data["order"] = data["order"] if data["order"] in QUEUE_ORDERS else "age"
        return {key: value for key, value in data.items() if value not in ("", None)}


def _deciding_for() -> forms.ChoiceField:
    """Whom the decision is made for: the choices are set per person and proposal (``owners``)."""
    return forms.ChoiceField(choices=[], required=False, label="Deciding for")


def each_owner_or_yourself(user) -> list[tuple[str, str]]:
    """For a decision on several proposals: each one's own owner ("") or the person alone."""
    return [("", "each proposal's owner"), (user.get_username(), f"yourself ({user.get_username()})")]


class DecisionForm(forms.Form):
    """One decision; "Deciding for" offers only ``owners`` (``reviews.selectors.representable_owners``)."""

    decision = forms.ChoiceField(choices=ReviewDecision.Decision.choices, widget=forms.RadioSelect)
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=5000)
    represented_owner = _deciding_for()
    action_digest = forms.RegexField(r"^[0-9a-f]{64}$", widget=forms.HiddenInput)

    def __init__(self, *args, owners: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["represented_owner"]).choices = owners


class BulkApproveForm(forms.Form):
    items = forms.MultipleChoiceField(choices=[], required=True)
    reason = forms.CharField(max_length=5000)
    represented_owner = _deciding_for()

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["represented_owner"]).choices = each_owner_or_yourself(user)
        # Values are "proposal_id:action_digest"; any well-formed pair is acceptable here.
        self.fields["items"].valid_value = lambda value: value.count(":") == 1  # type: ignore[attr-defined]

    def clean_items(self):
        return _id_digest_pairs(self.cleaned_data["items"])


Decision = ReviewDecision.Decision


class DecideTogetherForm(forms.Form):
    """This proposal's decision and one decision for the conflicting proposals ticked, with one reason.

    Each ticked value is "proposal_id:action_digest", the digest rendered with
    the page: a proposal changed since then is refused, not decided unseen.
    """

    decision = forms.ChoiceField(
        choices=[("", "leave undecided"), *Decision.choices], required=False, label="This proposal"
    )
    action_digest = forms.RegexField(r"^[0-9a-f]{64}$", widget=forms.HiddenInput)
    others = forms.MultipleChoiceField(choices=[], required=False)
    others_decision = forms.ChoiceField(
        choices=[(Decision.REJECT, "Reject"), (Decision.REQUEST_CHANGES, "Request changes")],
        label="The ticked conflicting proposals",
    )
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=5000)
    represented_owner = _deciding_for()

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["represented_owner"]).choices = each_owner_or_yourself(user)
        self.fields["others"].valid_value = lambda value: value.count(":") == 1  # type: ignore[attr-defined]

    def clean_others(self):
        return _id_digest_pairs(self.cleaned_data["others"])

    def clean(self):
        cleaned = super().clean() or {}
        if not cleaned.get("decision") and not cleaned.get("others"):
            raise forms.ValidationError("Choose a decision for this proposal or tick a conflicting one.")
        return cleaned


def _id_digest_pairs(values: list[str]) -> list[tuple[uuid.UUID, str]]:
    pairs = []
    for value in values:
        proposal_id, digest = value.split(":")
        try:
            pairs.append((uuid.UUID(proposal_id), digest))
        except ValueError:
            raise forms.ValidationError("Unknown proposal in the selection.") from None
    return pairs
