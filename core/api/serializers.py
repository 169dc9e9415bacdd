"""Serializer helpers shared by the apps' APIs."""

from rest_framework import serializers


class StrictSerializer(serializers.Serializer):
    """A plain serializer that refuses fields it does not declare.

    DRF silently drops unknown keys; for a governance API a misspelt field
    must be an error, not a silently ignored intention.
    """

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: ["Unknown field."] for name in unknown}, code="unknown_field"
                )
        return super().to_internal_value(data)
