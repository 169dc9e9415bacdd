"""REST: the tenant's Bounded Dreaming runs (read-only; runs are made by the beat task or the command).

A run's window and plan are about its members' content: each is shown in the
view the caller gets for the members it names (``proposals.presenters``).
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView

from core.api.pagination import CreatedCursorPagination
from memory_core.api import READ_CONTEXT_PARAMETERS, read_context
from proposals.models import DreamingRun
from proposals.presenters import attach_run_views, shown_run
from proposals.selectors import dreaming_run_status, dreaming_runs
from tenancy.authentication import request_agent


class DreamingRunOutput(serializers.ModelSerializer):
    """A run with members and plan in the caller's view of each member (metadata only if none is attached)."""

    status = serializers.SerializerMethodField()
    proposals = serializers.SerializerMethodField()
    view = serializers.SerializerMethodField(help_text="the strictest view the caller gets of any member")

    class Meta:
        model = DreamingRun
        fields = [
            "id",
            "trigger",
            "subject_kind",
            "subject_id",
            "scope",
            "memory_type",
            "members",
            "planner",
            "planner_version",
            "policy_fingerprint",
            "registration_version",
            "budget",
            "mode",
            "plan",
            "status",
            "closed_reason",
            "proposals",
            "created_at",
            "view",
        ]

    def to_representation(self, instance):
        return shown_run(super().to_representation(instance), getattr(instance, "member_views", None))

    def get_view(self, run: DreamingRun) -> str:
        return "metadata_only"  # replaced by shown_run

    def get_status(self, run: DreamingRun) -> str:
        return dreaming_run_status(run)

    def get_proposals(self, run: DreamingRun) -> list[dict]:
        return [
            {"proposal_id": str(p.pk), "action": p.action, "status": p.status, "matched_rule": p.matched_rule}
            for p in run.proposals.all()
        ]


class DreamingRunListApi(ListAPIView):
    """The tenant's Dreaming runs, newest first: window, plan, mode, and the status its proposals give it."""

    queryset = DreamingRun.objects.none()  # names the model for the schema; get_queryset scopes it
    serializer_class = DreamingRunOutput
    pagination_class = CreatedCursorPagination

    def get_queryset(self):
        return dreaming_runs(tenants=[request_agent(self.request).tenant_id])

    @extend_schema(summary="List Dreaming runs", parameters=READ_CONTEXT_PARAMETERS)
    def get(self, request, *args, **kwargs):
        self.read_context = read_context(request)  # refused (403) before anything is listed
        return self.list(request, *args, **kwargs)

    def paginate_queryset(self, queryset):
        return attach_run_views(super().paginate_queryset(queryset) or [], self.read_context)
