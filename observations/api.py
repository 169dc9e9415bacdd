"""``POST /api/v1/observations/``: an agent hands over a turn; its candidate memories become proposals.

The view only validates and shapes; ``observations.services`` does the work.
Tenant and agent come from the token. No Idempotency-Key header: each
proposal's key is derived from the observation and the candidate, so a
resent observation replays rather than duplicates.
"""

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.serializers import ChoiceField, StrictSerializer
from memory_core.api import PolicyContextInput, SubjectInput
from memory_core.models import Memory
from observations.extraction import KINDS, MAX_CANDIDATES, Observation
from observations.services import CandidateOutcome, check_contexts, ingest_observation
from proposals.api import EvidenceBindingInput, MemoryCreateInput
from proposals.presenters import attach_submitted_views, shown_content
from tenancy.throttling import charge

MAX_BATCH = 50  # observations per conversation batch
MAX_FIELDS = 50


class ObservationInput(StrictSerializer):
    kind = ChoiceField(choices=KINDS)
    text = serializers.CharField(max_length=20000, required=False, allow_blank=True, trim_whitespace=False)
    # DRF's metaclass moves declared fields out of the class, so this does not shadow .fields.
    fields = serializers.DictField(  # type: ignore[assignment]
        required=False, help_text="structured fields (key/value facts)"
    )
    subject = SubjectInput()
    scope = ChoiceField(choices=Memory.Scope.choices)
    evidence = EvidenceBindingInput(many=True, min_length=1, max_length=20)  # type: ignore[call-arg]
    policy_context = PolicyContextInput(required=False)
    candidates = MemoryCreateInput(  # type: ignore[call-arg]
        many=True, required=False, max_length=MAX_CANDIDATES, help_text="memories the agent proposes"
    )

    def validate(self, attrs):
        if not attrs.get("text", "").strip() and not attrs.get("fields"):
            raise serializers.ValidationError({"text": ["Send text, fields or both."]})
        if len(attrs.get("fields", {})) > MAX_FIELDS:
            raise serializers.ValidationError({"fields": [f"At most {MAX_FIELDS} fields."]})
        # A candidate is about what was observed: another subject or scope is a lying field.
        for index, memory in enumerate(attrs.get("candidates", [])):
            if memory["subject"] != attrs["subject"] or memory["scope"] != attrs["scope"]:
                raise serializers.ValidationError(
                    {"candidates": {str(index): ["Subject and scope must be the observation's."]}}
                )
        return attrs


class ObservationBatchInput(StrictSerializer):
    observations = ObservationInput(many=True, min_length=1, max_length=MAX_BATCH)  # type: ignore[call-arg]


class CandidateOutput(serializers.Serializer):
    origin = serializers.ChoiceField(choices=["agent", "extractor"])
    type = serializers.CharField()
    content = serializers.JSONField(help_text="in the view its proposal is shown in (see view)")
    view = serializers.CharField(help_text="raw, summary, masked or metadata_only, as for the proposal")
    proposal_id = serializers.UUIDField(allow_null=True)
    status = serializers.CharField(allow_null=True)
    classification = serializers.CharField(allow_null=True)
    matched_rule = serializers.CharField(allow_null=True)
    reason_codes = serializers.ListField(child=serializers.CharField())
    replayed = serializers.BooleanField()
    error = serializers.CharField(allow_null=True, help_text="the stable code, when refused")


class ObservationOutput(serializers.Serializer):
    candidates = CandidateOutput(many=True)


class ObservationBatchOutput(serializers.Serializer):
    observations = ObservationOutput(many=True)


def _candidate(outcome: CandidateOutcome) -> dict:
    """One candidate's answer; once it is a proposal, its content is shown as that proposal's would be."""
    proposal = outcome.proposal
    content = outcome.memory["content"]
    if proposal is not None and proposal.policy_facts.get("contains_secret"):
        content = proposal.fields.get("content", {})  # withheld: never answer a secret back
    return {
        "origin": outcome.origin,
        "type": outcome.memory["type"],
        "content": shown_content(proposal, content) if proposal else content,
        "view": proposal.read_view.mode if proposal else "raw",  # type: ignore[attr-defined]
        "proposal_id": proposal.id if proposal else None,
        "status": proposal.status if proposal else None,
        "classification": proposal.classification if proposal else None,
        "matched_rule": proposal.matched_rule if proposal else None,
        "reason_codes": proposal.reason_codes if proposal else [],
        "replayed": outcome.replayed,
        "error": outcome.error.code if outcome.error else None,
    }


def _ingest(agent, data: dict) -> dict:
    observation = Observation(
        kind=data["kind"],
        subject=dict(data["subject"]),
        scope=data["scope"],
        text=data.get("text", ""),
        fields=data.get("fields", {}),
    )
    outcomes = ingest_observation(
        agent=agent,
        observation=observation,
        evidence=[dict(binding) for binding in data["evidence"]],  # type: ignore[misc]
        policy_context=data.get("policy_context", {}),
        candidates=data.get("candidates", []),
    )
    attach_submitted_views(agent, [(o.proposal, o.replayed) for o in outcomes if o.proposal is not None])
    return {"candidates": [_candidate(outcome) for outcome in outcomes]}


_EXAMPLE = {
    "kind": "utterance",
    "text": "Thanks. I prefer weekly summaries on Mondays.",
    "subject": {"kind": "user", "id": "pm-alice"},
    "scope": "user",
    "evidence": [
        {
            "evidence_id": "5b1f8a52-7d1e-4c5e-9a43-0f6b2c1d9e77",
            "revision": 1,
            "content_hash": "9f2c4e7a1b3d5f6081726354a9b8c7d6e5f40312a1b2c3d4e5f60718293a4b5c",
        }
    ],
    "policy_context": {
        "acting_for_subject": {"kind": "user", "id": "pm-alice"},
        "consent_basis": "explicit",
        "risk_level": "low",
    },
}


class ObservationApi(APIView):
    """Hand over one observation; every candidate memory it yields is submitted as a proposal."""

    @extend_schema(
        summary="Submit an observation",
        request=ObservationInput,
        responses={200: ObservationOutput},
        examples=[OpenApiExample("utterance", value=_EXAMPLE, request_only=True)],
    )
    def post(self, request):
        serializer = ObservationInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        return Response(_ingest(request.user, serializer.validated_data))


class ObservationBatchApi(APIView):
    """A whole conversation (at most 50 observations), ingested in order."""

    @extend_schema(
        summary="Submit a conversation",
        request=ObservationBatchInput,
        responses={200: ObservationBatchOutput},
    )
    def post(self, request):
        serializer = ObservationBatchInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        observations = serializer.validated_data["observations"]
        charge(self, request, len(observations) - 1)  # each observation costs what its single POST would
        check_contexts(
            agent=request.user, policy_contexts=[data.get("policy_context", {}) for data in observations]
        )
        results = [_ingest(request.user, data) for data in observations]
        return Response({"observations": results})
