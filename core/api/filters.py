"""django-filter filters for the list endpoints: refusals as precise as the body serializers'.

``DjangoFilterBackend`` turns an invalid filter into a DRF ``ValidationError``
(problem+json ``validation_error``, one entry per field); drf-spectacular
documents each filter from its FilterSet. The bounds given here are declared
once and both enforced and documented.
"""

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from django_filters.fields import IsoDateTimeField
from drf_spectacular.utils import extend_schema_field


class ChoiceFilter(django_filters.ChoiceFilter):  # type: ignore[misc, unused-ignore]  # django-filter ships no types
    """A choice filter whose refusal lists the valid choices: agents learn them from the error."""

    def __init__(self, *, choices: Sequence[tuple[Any, Any]], **kwargs: Any) -> None:
        valid = ", ".join(str(value) for value, _ in choices)
        message = f'"%(value)s" is not a valid choice; use one of: {valid}.'
        super().__init__(choices=choices, error_messages={"invalid_choice": message}, **kwargs)
        # Documented from the choices, so the schema never looks for a model field of this name.
        extend_schema_field({"type": "string", "enum": [value for value, _ in choices]})(self)


class CharFilter(django_filters.CharFilter):  # type: ignore[misc, unused-ignore]  # django-filter ships no types
    """An exact-match text filter with a length bound (a longer value could never match)."""

    def __init__(self, *, max_length: int, **kwargs: Any) -> None:
        super().__init__(max_length=max_length, **kwargs)
        extend_schema_field({"type": "string", "maxLength": max_length})(self)


class IntegerFilter(django_filters.NumberFilter):  # type: ignore[misc, unused-ignore]  # django-filter ships no types
    """A whole-number filter within bounds (``NumberFilter`` alone would accept decimals)."""

    field_class = forms.IntegerField

    def __init__(self, *, min_value: int, max_value: int, **kwargs: Any) -> None:
        super().__init__(min_value=min_value, max_value=max_value, **kwargs)
        extend_schema_field({"type": "integer", "minimum": min_value, "maximum": max_value})(self)


class UtcDateTimeField(IsoDateTimeField):  # type: ignore[misc, unused-ignore]  # django-filter ships no types
    """An ISO 8601 moment in UTC: the database never sees an offset it cannot store (+23:59)."""

    def to_python(self, value: Any) -> datetime | None:
        moment: datetime | None = super().to_python(value)
        if moment is None:
            return None
        try:
            return moment.astimezone(UTC)
        except OverflowError:  # 0001-01-01T00:00+01:00 lies before the first representable moment
            raise ValidationError(self.error_messages["invalid"], code="invalid") from None


class DateTimeFilter(django_filters.IsoDateTimeFilter):  # type: ignore[misc, unused-ignore]  # django-filter ships no types
    field_class = UtcDateTimeField
