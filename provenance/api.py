"""REST endpoints for evidence (agents).

They live in provenance, above the evidence app: revising or invalidating
evidence blocks proposals and fences memories (``provenance.services``).
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.serializers import ChoiceField, StrictSerializer
from evidence.errors import InvalidationNotPermitted
from evidence.models import EvidenceRevision, EvidenceSource
from evidence.selectors import evidence_revision, evidence_source
from evidence.services import register_evidence
from provenance.services import add_evidence_revision, invalidate_evidence_revision


class EvidenceRevisionOutput(serializers.ModelSerializer):
    evidence_id = serializers.UUIDField(source="source_id")

    class Meta:
        model = EvidenceRevision
        fields = [
            "evidence_id",
            "revision",
            "content",
            "content_hash",
            "status",
            "status_reason",
            "created_at",
        ]


class EvidenceOutput(serializers.ModelSerializer):
    # The same name the registration answer and every binding use for this id.
    evidence_id = serializers.UUIDField(source="id")
    revisions = EvidenceRevisionOutput(many=True)

    class Meta:
        model = EvidenceSource
        fields = ["evidence_id", "kind", "external_ref", "latest_revision", "created_at", "revisions"]


class EvidenceRegisterInput(StrictSerializer):
    kind = ChoiceField(choices=EvidenceSource.Kind.choices)
    external_ref = serializers.CharField(max_length=512)
    content = serializers.JSONField()


class EvidenceRevisionInput(StrictSerializer):
    content = serializers.JSONField()


class EvidenceRegisterApi(APIView):
    """Register a source of evidence with its first revision; proposals cite exact revisions."""

    @extend_schema(
        summary="Register evidence", request=EvidenceRegisterInput, responses={201: EvidenceRevisionOutput}
    )
    def post(self, request):
        data = _validated(EvidenceRegisterInput, request)
        revision = register_evidence(agent=request.user, **data)
        return Response(EvidenceRevisionOutput(revision).data, status=status.HTTP_201_CREATED)


class EvidenceDetailApi(APIView):
    """One evidence source of the tenant with its revisions and their status."""

    @extend_schema(summary="Get evidence", responses=EvidenceOutput)
    def get(self, request, evidence_id):
        source = evidence_source(tenant=request.user.tenant, evidence_id=evidence_id)
        return Response(EvidenceOutput(source).data)


class EvidenceRevisionAddApi(APIView):
    """Add a revision to an evidence source; earlier revisions stay citable as they were."""

    @extend_schema(
        summary="Add an evidence revision",
        request=EvidenceRevisionInput,
        responses={201: EvidenceRevisionOutput},
    )
    def post(self, request, evidence_id):
        source = evidence_source(tenant=request.user.tenant, evidence_id=evidence_id)
        data = _validated(EvidenceRevisionInput, request)
        revision = add_evidence_revision(source=source, agent=request.user, content=data["content"])
        return Response(EvidenceRevisionOutput(revision).data, status=status.HTTP_201_CREATED)


class EvidenceInvalidateInput(StrictSerializer):
    reason = serializers.CharField(max_length=2000)


class EvidenceInvalidateApi(APIView):
    """Invalidate one revision: memories resting on it are fenced at once, open proposals blocked."""

    @extend_schema(
        summary="Invalidate an evidence revision",
        request=EvidenceInvalidateInput,
        responses={200: EvidenceRevisionOutput},
    )
    def post(self, request, evidence_id, revision):
        if not request.user.can_invalidate_evidence:
            raise InvalidationNotPermitted()
        target = evidence_revision(tenant=request.user.tenant, evidence_id=evidence_id, revision=revision)
        data = _validated(EvidenceInvalidateInput, request)
        return Response(EvidenceRevisionOutput(invalidate_evidence_revision(revision=target, **data)).data)


def _validated(serializer_class, request) -> dict:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
