"""REST endpoints for reviewers (session or personal ``csu_`` token; agents get 403)."""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.pagination import CreatedCursorPagination
from core.api.serializers import ChoiceField, Sha256Field, StrictSerializer
from core.replica import reads_from_replica
from proposals.api import ProposalOutput
from proposals.models import Proposal
from proposals.presenters import attach_decider_views
from reviews.filters import ReviewQueueFilter
from reviews.models import ReviewDecision
from reviews.selectors import review_queue
from reviews.services import record_decision
from tenancy.authentication import IsPerson


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


class QueueCursorPagination(CreatedCursorPagination):
    ordering = ("created_at", "id")


@extend_schema_view(get=extend_schema(summary="List proposals awaiting your decision"))
class ReviewQueueApi(ListAPIView):
    """The proposals this person may decide, oldest first."""

    permission_classes = [IsPerson]
    queryset = Proposal.objects.none()  # names the model for the schema; get_queryset scopes it
    serializer_class = ProposalOutput
    pagination_class = QueueCursorPagination
    filterset_class = ReviewQueueFilter

    def get_queryset(self):
        return review_queue(user=self.request.user)

    @reads_from_replica
    def get(self, request, *args, **kwargs):
        return self.list(request, *args, **kwargs)

    def paginate_queryset(self, queryset):
        # The queue holds only what this person may decide: shown raw, as the review page shows it.
        return attach_decider_views(super().paginate_queryset(queryset) or [])


class DecisionCreateApi(APIView):
    """Decide a proposal: approve, reject (a veto) or request changes, bound to its digest."""

    permission_classes = [IsPerson]

    @extend_schema(
        summary="Decide a proposal",
        tags=["Reviews"],
        request=ReviewDecisionInput,
        responses={201: ReviewDecisionOutput},
    )
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
