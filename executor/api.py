"""REST endpoints for receipts (read-only).

A receipt names the evidence its memory rests on: shown only to a caller who
gets that memory raw (the view of its proposal, ``proposals.presenters``), as
recall shows evidence only raw. The rest of a receipt is metadata.
"""

import uuid
from collections.abc import Iterable
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.pagination import CreatedCursorPagination
from executor.filters import ReceiptFilter
from executor.models import Receipt
from executor.selectors import receipt_detail, receipt_list
from memory_core.api import READ_CONTEXT_PARAMETERS, read_context
from proposals.presenters import UNRESOLVED, ReadView, attach_views
from tenancy.authentication import request_agent

# Receipt columns agents are not shown: the tenant is their own; the memory hashes and a purge's
# effects are read by verify_receipts and the admin.
_NOT_SHOWN = frozenset({"tenant_id", "before_memory_hash", "after_memory_hash", "effects"})


class ReceiptOutput(serializers.ModelSerializer[Receipt]):
    """A receipt; its evidence only in a raw view of its memory (none attached: not shown)."""

    proposal_id = serializers.UUIDField()
    outbox_entry_id = serializers.UUIDField()
    view = serializers.SerializerMethodField(help_text="the caller's view of its memory (evidence only raw)")

    class Meta:
        model = Receipt
        # The columns the receipt's hash covers, and the hash.
        fields = [column for column in (*Receipt.BODY_COLUMNS, "hash") if column not in _NOT_SHOWN] + ["view"]

    def get_view(self, receipt: Receipt) -> str:
        return _view(receipt).mode

    def to_representation(self, instance: Receipt) -> dict[str, Any]:
        data = super().to_representation(instance)
        if data["view"] != "raw":
            data["evidence"] = []
        return data


def _view(receipt: Receipt) -> ReadView:
    return getattr(receipt.proposal, "read_view", None) or ReadView(UNRESOLVED)


def attach_receipt_views(receipts: Iterable[Receipt], context: dict[str, Any]) -> list[Receipt]:
    """Give the proposal of each receipt the caller's view: one read of the page's memories."""
    listed = list(receipts)
    attach_views([receipt.proposal for receipt in listed], context)
    return listed


class ReceiptListApi(ListAPIView[Receipt]):
    """The tenant's receipts, newest first; ?proposal=, ?memory= and ?dreaming_run= narrow them."""

    queryset = Receipt.objects.none()  # names the model for the schema; get_queryset scopes it
    serializer_class = ReceiptOutput
    pagination_class = CreatedCursorPagination
    filterset_class = ReceiptFilter

    def get_queryset(self) -> QuerySet[Receipt]:
        return receipt_list(tenant=request_agent(self.request).tenant).select_related("proposal")

    @extend_schema(summary="List receipts", parameters=READ_CONTEXT_PARAMETERS)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        self.read_context = read_context(request)  # refused (403) before anything is listed
        return self.list(request, *args, **kwargs)

    def paginate_queryset(self, queryset: Any) -> Any:
        return attach_receipt_views(super().paginate_queryset(queryset) or [], self.read_context)


class ReceiptDetailApi(APIView):
    """One receipt: what the executor did with a released proposal, and its place in the hash chain."""

    @extend_schema(summary="Get a receipt", parameters=READ_CONTEXT_PARAMETERS, responses=ReceiptOutput)
    def get(self, request: Any, receipt_id: uuid.UUID) -> Response:
        context = read_context(request)
        receipt = receipt_detail(tenant=request.user.tenant, receipt_id=receipt_id)
        return Response(ReceiptOutput(*attach_receipt_views([receipt], context)).data)
