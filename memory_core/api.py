"""REST endpoint for reading one memory (recall with return modes comes later)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from memory_core.models import Memory, MemoryEvidence
from memory_core.selectors import memory_detail


class MemoryEvidenceOutput(serializers.ModelSerializer):
    evidence_id = serializers.UUIDField(source="evidence_revision.source_id")
    revision = serializers.IntegerField(source="evidence_revision.revision")
    status = serializers.CharField(source="evidence_revision.status")

    class Meta:
        model = MemoryEvidence
        fields = ["evidence_id", "revision", "content_hash", "status"]


class MemoryOutput(serializers.ModelSerializer):
    memory_id = serializers.UUIDField(source="id")
    subject = serializers.SerializerMethodField()
    evidence = MemoryEvidenceOutput(source="current_evidence", many=True)

    class Meta:
        model = Memory
        fields = [
            "memory_id",
            "subject",
            "scope",
            "type",
            "content",
            "sensitivity",
            "confidence",
            "retention_policy",
            "ttl_seconds",
            "expires_at",
            "valid_from",
            "valid_to",
            "dedupe_key",
            "state",
            "revision",
            "created_at",
            "updated_at",
            "evidence",
        ]

    def get_subject(self, memory) -> dict:
        return {"kind": memory.subject_kind, "id": memory.subject_id}


class MemoryDetailApi(APIView):
    @extend_schema(responses=MemoryOutput)
    def get(self, request, memory_id):
        memory = memory_detail(tenant=request.user.tenant, memory_id=memory_id)
        return Response(MemoryOutput(memory).data)
