"""REST: the tenant's Bounded Dreaming runs (read-only; runs are made by the beat task or the command)."""

from rest_framework import serializers
from rest_framework.generics import ListAPIView

from core.api.pagination import CreatedCursorPagination
from proposals.models import DreamingRun
from proposals.selectors import dreaming_run_status, dreaming_runs
from tenancy.authentication import request_agent


class DreamingRunOutput(serializers.ModelSerializer):
    status = serializers.SerializerMethodField()
    proposals = serializers.SerializerMethodField()

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
        ]

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
