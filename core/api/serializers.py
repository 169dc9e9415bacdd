"""Serializer helpers shared by the apps' APIs."""

from typing import Any

from rest_framework import serializers


class StrictSerializer(serializers.Serializer[Any]):
    """A plain serializer that refuses fields it does not declare.

    DRF silently drops unknown keys; for a governance API a misspelt field
    must be an error, not a silently ignored intention.
    """

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: ["Unknown field."] for name in unknown}, code="unknown_field"
                )
        return super().to_internal_value(data)


class ChoiceField(serializers.ChoiceField):
    """A choice field whose refusal lists the valid choices: agents learn them from the error."""

    default_error_messages = {"invalid_choice": '"{input}" is not a valid choice; use one of: {choices}.'}

    def to_internal_value(self, data: Any) -> Any:
        if data == "" and self.allow_blank:
            return ""
        try:
            return self.choice_strings_to_values[str(data)]
        except KeyError:
            self.fail("invalid_choice", input=data, choices=", ".join(self.choice_strings_to_values))


class Sha256Field(serializers.RegexField):
    """A SHA-256 digest as Custodian writes them: 64 lowercase hex characters."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("error_messages", {"invalid": "Must be a SHA-256: 64 lowercase hex characters."})
        super().__init__(r"^[0-9a-f]{64}$", **kwargs)
