"""Form fields for the admin that read JSON as strictly as the API does."""

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.forms.fields import InvalidJSONInput

from core import strict_json
from core.strict_json import FILE_MAX_DEPTH


class StrictJSONField(forms.JSONField):
    """A JSON form field that refuses what :mod:`core.strict_json` refuses, as a form error.

    Django's own parses with plain ``json.loads``: deep nesting raises
    ``RecursionError`` (a 500) and ``NaN`` or a NUL get as far as the database.
    """

    def to_python(self, value: Any) -> Any:
        if not self.disabled and isinstance(value, str) and value not in self.empty_values:
            try:
                strict_json.loads(value, max_depth=FILE_MAX_DEPTH)
            except strict_json.JSONRefused as refused:
                raise ValidationError(str(refused), code="invalid") from None
        return super().to_python(value)

    def bound_data(self, data: Any, initial: Any) -> Any:
        """Show refused text back as it was typed (Django's re-parses it, and would recurse too)."""
        if not self.disabled and isinstance(data, str):
            try:
                strict_json.loads(data, max_depth=FILE_MAX_DEPTH)
            except strict_json.JSONRefused:
                return InvalidJSONInput(data)
        return super().bound_data(data, initial)
