"""REST endpoints for reviewers (session or personal ``csu_`` token; agents get 403)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.pagination import CreatedCursorPagination
from core.api.serializers import ChoiceField, Sha256Field, StrictSerializer
from memory_core.models import AccessEvent, AccessEventItem, Memory
from memory_core.selectors import access_events
from proposals.api import ProposalOutput
from proposals.models import Proposal
from reviews.models import ReviewDecision
from reviews.selectors import review_queue, viewable_tenants
from reviews.services import record_decision
from tenancy.authentication import IsAgent, IsPerson
from tenancy.models import Agent


class ReviewDecisionOutput(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.get_username")
    proposal_id = serializers.UUIDField()

    class Meta:
        model = ReviewDecision
        fields = [
            "id",
            "proposal_id",
            "actor",
            "represented_owner",
            "decision",
            "reason",
            "action_digest",
            "proposal_version",
            "policy_fingerprint",
            "channel",
            "created_at",
        ]


class ReviewDecisionInput(StrictSerializer):
    decision = ChoiceField(choices=ReviewDecision.Decision.choices)
    reason = serializers.CharField(max_length=5000)
    represented_owner = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    action_digest = Sha256Field()


class ReviewQueueFilterInput(serializers.Serializer):
    type = ChoiceField(choices=Memory.Type.choices, required=False)
    scope = ChoiceField(choices=Memory.Scope.choices, required=False)
    risk_level = ChoiceField(choices=list(Proposal.RISK_RANKS), required=False)
    agent = serializers.CharField(max_length=64, required=False)
    reason = serializers.CharField(max_length=100, required=False)
    older_than_hours = serializers.IntegerField(min_value=0, max_value=24 * 3650, required=False)


class QueueCursorPagination(CreatedCursorPagination):
    ordering = ("created_at", "id")


class ReviewQueueApi(APIView):
    """The proposals this person may decide, oldest first."""

    permission_classes = [IsPerson]
    pagination_class = QueueCursorPagination

    @extend_schema(
        parameters=[ReviewQueueFilterInput, OpenApiParameter("cursor", str), OpenApiParameter("limit", int)],
        responses=ProposalOutput(many=True),
    )
    def get(self, request):
        filters = ReviewQueueFilterInput(data=request.query_params)
        filters.is_valid(raise_exception=True)
        data = dict(filters.validated_data)
        data["memory_type"] = data.pop("type", "")
        proposals = review_queue(user=request.user, **data)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(proposals, request, view=self)
        return paginator.get_paginated_response(ProposalOutput(page, many=True).data)


class DecisionCreateApi(APIView):
    """Decide a proposal: approve, reject (a veto) or request changes, bound to its digest."""

    permission_classes = [IsPerson]

    @extend_schema(request=ReviewDecisionInput, responses={201: ReviewDecisionOutput})
    def post(self, request, proposal_id):
        data = ReviewDecisionInput(data=request.data)
        data.is_valid(raise_exception=True)
        decision = record_decision(
            actor=request.user,
            proposal_id=proposal_id,
            channel=ReviewDecision.Channel.API,
            **data.validated_data,
        )
        return Response(ReviewDecisionOutput(decision).data, status=status.HTTP_201_CREATED)


class AccessEventItemOutput(serializers.ModelSerializer):
    class Meta:
        model = AccessEventItem
        fields = ["memory_id", "revision", "mode", "rule"]


class AccessEventOutput(serializers.ModelSerializer):
    actor = serializers.CharField(source="agent.name", default=None)
    items = AccessEventItemOutput(many=True)

    class Meta:
        model = AccessEvent
        fields = [
            "id",
            "action",
            "outcome",
            "actor",
            "target_memory_id",
            "query",
            "filters",
            "correlation_id",
            "omitted_count",
            "policy_fingerprint",
            "created_at",
            "items",
        ]


class AuditEventFilterInput(serializers.Serializer):
    memory = serializers.UUIDField(required=False)
    actor = serializers.CharField(max_length=64, required=False)
    action = ChoiceField(choices=AccessEvent.Action.choices, required=False)
    correlation_id = serializers.CharField(max_length=200, required=False)
    since = serializers.DateTimeField(required=False)


class AuditEventListApi(APIView):
    """Audited reads: an agent sees its own tenant's, a person the tenants they review or audit."""

    permission_classes = [IsAgent | IsPerson]
    pagination_class = CreatedCursorPagination

    @extend_schema(
        parameters=[AuditEventFilterInput, OpenApiParameter("cursor", str), OpenApiParameter("limit", int)],
        responses=AccessEventOutput(many=True),
    )
    def get(self, request):
        filters = AuditEventFilterInput(data=request.query_params)
        filters.is_valid(raise_exception=True)
        if isinstance(request.user, Agent):
            tenant_ids = [request.user.tenant_id]
        else:
            tenant_ids = viewable_tenants(request.user).values("pk")
        events = access_events(tenant_ids=tenant_ids, **filters.validated_data)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(events, request, view=self)
        return paginator.get_paginated_response(AccessEventOutput(page, many=True).data)
