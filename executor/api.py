"""REST endpoints for receipts (read-only)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.pagination import CreatedCursorPagination
from executor.models import Receipt
from executor.selectors import receipt_detail, receipt_list


class ReceiptOutput(serializers.ModelSerializer):
    proposal_id = serializers.UUIDField()
    outbox_entry_id = serializers.UUIDField()

    class Meta:
        model = Receipt
        fields = [
            "id",
            "seq",
            "proposal_id",
            "outbox_entry_id",
            "outcome",
            "reason",
            "memory_id",
            "before_revision",
            "after_revision",
            "before_content_hash",
            "after_content_hash",
            "action_digest",
            "evidence",
            "decision_ids",
            "policy_fingerprint",
            "executor",
            "created_at",
            "prev_hash",
            "hash",
        ]


class ReceiptFilterInput(serializers.Serializer):
    proposal = serializers.UUIDField(required=False)
    memory = serializers.UUIDField(required=False)


class ReceiptListApi(APIView):
    pagination_class = CreatedCursorPagination

    @extend_schema(
        parameters=[
            OpenApiParameter("proposal", str),
            OpenApiParameter("memory", str),
            OpenApiParameter("cursor", str),
            OpenApiParameter("limit", int),
        ],
        responses=ReceiptOutput(many=True),
    )
    def get(self, request):
        filters = ReceiptFilterInput(data=request.query_params)
        filters.is_valid(raise_exception=True)
        receipts = receipt_list(tenant=request.user.tenant, **filters.validated_data)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(receipts, request, view=self)
        return paginator.get_paginated_response(ReceiptOutput(page, many=True).data)


class ReceiptDetailApi(APIView):
    @extend_schema(responses=ReceiptOutput)
    def get(self, request, receipt_id):
        return Response(ReceiptOutput(receipt_detail(tenant=request.user.tenant, receipt_id=receipt_id)).data)
