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
from tenancy.authentication import request_agent

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


class ReceiptListApi(ListAPIView):
    """The tenant's receipts, newest first; ?proposal=, ?memory= and ?dreaming_run= narrow them."""

    queryset = Receipt.objects.none()  # names the model for the schema; get_queryset scopes it
    serializer_class = ReceiptOutput
    pagination_class = CreatedCursorPagination
    filterset_class = ReceiptFilter

    def get_queryset(self):
        return receipt_list(tenant=request_agent(self.request).tenant)


class ReceiptDetailApi(APIView):
    @extend_schema(responses=ReceiptOutput)
    def get(self, request, receipt_id):
        return Response(ReceiptOutput(receipt_detail(tenant=request.user.tenant, receipt_id=receipt_id)).data)
