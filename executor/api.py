"""REST endpoints for receipts (read-only)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.pagination import CreatedCursorPagination
from executor.filters import ReceiptFilter
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


class ReceiptListApi(ListAPIView):
    """The tenant's receipts, newest first; ``?proposal=`` and ``?memory=`` narrow them."""

    queryset = Receipt.objects.none()  # names the model for the schema; get_queryset scopes it
    serializer_class = ReceiptOutput
    pagination_class = CreatedCursorPagination
    filterset_class = ReceiptFilter

    def get_queryset(self):
        return receipt_list(tenant=self.request.user.tenant)


class ReceiptDetailApi(APIView):
    @extend_schema(responses=ReceiptOutput)
    def get(self, request, receipt_id):
        return Response(ReceiptOutput(receipt_detail(tenant=request.user.tenant, receipt_id=receipt_id)).data)
