"""Per-type validation of a memory's ``content``.

Every type requires a non-blank ``statement``, and every type's schema is
closed: content of one kind cannot travel under another type's rules (a
factor conclusion's ``factor``/``universe``/``metric`` fields are refused
on an episodic event, which policy lets through with lighter checks). The
typed schemas follow MGP (preference, semantic_fact, procedural_rule,
relationship); ``semantic_fact`` also carries the quant fields a factor
conclusion needs.
"""

from typing import Any

from rest_framework import serializers

from core.api.serializers import StrictSerializer
from core.errors import DomainError


class InvalidContent(DomainError):
    code = "validation_error"
    status = 400
    title = "Invalid memory content"


class _Common(serializers.Serializer):
    statement = serializers.CharField(max_length=4000)
    summary = serializers.CharField(max_length=1000, required=False)
    keywords = serializers.ListField(
        child=serializers.CharField(max_length=100), required=False, max_length=50
    )
    # MGP content is open; fields a client's schema has and this type does not declare travel
    # here, flat (strings, numbers, booleans, null), so they are kept, hashed and reviewed with
    # the rest. Policy reads no content field, so this opens no lighter path.
    attributes = serializers.DictField(required=False)

    def validate_attributes(self, value):
        if len(value) > 50:
            raise serializers.ValidationError("At most 50 attributes.")
        for key, item in value.items():
            if len(key) > 200 or not (item is None or isinstance(item, str | int | float | bool)):
                raise serializers.ValidationError(f"{key!r}: attributes are flat (string, number, boolean)")
            if isinstance(item, str) and len(item) > 4000:
                raise serializers.ValidationError(f"{key!r}: at most 4000 characters")
        return value

    def validate_keywords(self, value):
        if len(set(value)) != len(value):
            raise serializers.ValidationError("Keywords must be unique.")
        return value


class PreferenceContent(_Common, StrictSerializer):
    preference = serializers.CharField(max_length=1000, required=False)
    preference_key = serializers.CharField(max_length=200, required=False)
    preference_value = serializers.JSONField(required=False)


class SemanticFactContent(_Common, StrictSerializer):
    fact = serializers.CharField(max_length=2000, required=False)
    fact_key = serializers.CharField(max_length=200, required=False)
    fact_value = serializers.JSONField(required=False)
    factor = serializers.CharField(max_length=200, required=False)
    universe = serializers.CharField(max_length=200, required=False)
    horizon = serializers.CharField(max_length=100, required=False)
    metric = serializers.CharField(max_length=100, required=False)
    value = serializers.FloatField(required=False)
    conclusion = serializers.CharField(max_length=2000, required=False)


class ProceduralRuleContent(_Common, StrictSerializer):
    rule = serializers.CharField(max_length=2000, required=False)
    trigger = serializers.CharField(max_length=1000, required=False)
    action = serializers.CharField(max_length=1000, required=False)


class RelationshipContent(_Common, StrictSerializer):
    subject_entity = serializers.CharField(max_length=500, required=False)
    relation = serializers.CharField(max_length=200, required=False)
    object_entity = serializers.CharField(max_length=500, required=False)
    valid_from = serializers.DateTimeField(required=False)
    valid_to = serializers.DateTimeField(required=False)


class ProfileContent(_Common, StrictSerializer):
    profile_key = serializers.CharField(max_length=200, required=False)
    profile_value = serializers.JSONField(required=False)


class EpisodicEventContent(_Common, StrictSerializer):
    event = serializers.CharField(max_length=2000, required=False)
    occurred_at = serializers.DateTimeField(required=False)
    outcome = serializers.CharField(max_length=2000, required=False)
    participants = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, max_length=50
    )
    run_id = serializers.CharField(max_length=200, required=False)
    session_id = serializers.CharField(max_length=200, required=False)
    task_id = serializers.CharField(max_length=200, required=False)


class CheckpointPointerContent(_Common, StrictSerializer):
    checkpoint_id = serializers.CharField(max_length=200, required=False)
    uri = serializers.CharField(max_length=2000, required=False)
    run_id = serializers.CharField(max_length=200, required=False)


class ArtifactSummaryContent(_Common, StrictSerializer):
    artifact_id = serializers.CharField(max_length=200, required=False)
    artifact_kind = serializers.CharField(max_length=100, required=False)
    title = serializers.CharField(max_length=500, required=False)
    uri = serializers.CharField(max_length=2000, required=False)


CONTENT_SCHEMAS: dict[str, type[serializers.Serializer]] = {
    "profile": ProfileContent,
    "preference": PreferenceContent,
    "episodic_event": EpisodicEventContent,
    "semantic_fact": SemanticFactContent,
    "procedural_rule": ProceduralRuleContent,
    "relationship": RelationshipContent,
    "checkpoint_pointer": CheckpointPointerContent,
    "artifact_summary": ArtifactSummaryContent,
}


def validate_content(memory_type: str, content: Any) -> dict:
    """Return ``content`` unchanged if it is valid for ``memory_type``; raise otherwise.

    The stored content is the submitted JSON, not the serializer's coerced
    copy, so the action digest covers exactly what the agent sent.
    """
    if not isinstance(content, dict):
        raise InvalidContent(errors={"content": ["Must be an object."]})
    schema = CONTENT_SCHEMAS[memory_type](data=content)
    if not schema.is_valid():
        raise InvalidContent(errors={"content": schema.errors})
    statement = content["statement"]
    if not isinstance(statement, str) or not statement.strip():
        raise InvalidContent(errors={"content": {"statement": ["Must be a non-blank string."]}})
    return content


def validate_retention(fields: dict) -> None:
    """MGP's retention semantics: time_bound memories carry a TTL, persistent ones never do."""
    has_ttl = bool(fields.get("ttl_seconds") or fields.get("expires_at"))
    policy = fields.get("retention_policy")
    if policy == "persistent" and has_ttl:
        raise InvalidContent(
            errors={"retention_policy": ["Persistent memories have no TTL; use time_bound."]}
        )
    if policy == "time_bound" and not has_ttl:
        raise InvalidContent(
            errors={"retention_policy": ["time_bound memories need ttl_seconds or expires_at."]}
        )
