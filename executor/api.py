"""REST endpoints for receipts (read-only)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.pagination import CreatedCursorPagination
from executor.models import Receipt
from executor.selectors import receipt_detail, receipt_list

# Receipt columns agents are not shown: the tenant is their own; the memory hashes and a purge's
# effects are read by verify_receipts and the admin.
_NOT_SHOWN = frozenset({"tenant_id", "before_memory_hash", "after_memory_hash", "effects"})


class ReceiptOutput(serializers.ModelSerializer):
    proposal_id = serializers.UUIDField()
    outbox_entry_id = serializers.UUIDField()

    class Meta:
        model = Receipt
        # The columns the receipt's hash covers, and the hash.
        fields = [column for column in (*Receipt.BODY_COLUMNS, "hash") if column not in _NOT_SHOWN]


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
