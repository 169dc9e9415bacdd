"""The email preference form: only the mode; whose preference it is comes from the session."""

from django import forms

from notifications.models import EmailPreference


class EmailPreferenceForm(forms.Form):
    mode = forms.ChoiceField(
        choices=EmailPreference.Mode.choices, widget=forms.RadioSelect, label="Email me about reviews"
    )
