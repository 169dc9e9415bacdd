"""The audit trail of reads over REST: who recalled or read what, under which rule.

An agent sees its own tenant's events; a person those of the tenants they review or audit.
What a search asked (its query text and filters) is shown to the agent that asked and to
people; another agent of the tenant sees that the search happened, not what it asked.
"""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.generics import ListAPIView

from core.api.pagination import CreatedCursorPagination
from core.replica import reads_from_replica
from memory_core.filters import AccessEventFilter
from memory_core.models import AccessEvent, AccessEventItem
from memory_core.return_modes import MASK
from memory_core.selectors import access_events
from tenancy.authentication import IsAgent, IsPerson
from tenancy.models import Agent
from tenancy.selectors import viewable_tenants


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

    def to_representation(self, instance):
        data = super().to_representation(instance)
        caller = self.context["request"].user if "request" in self.context else None
        if not isinstance(caller, Agent) or instance.agent_id == caller.pk:
            return data
        data["query"] = MASK if data["query"] else ""
        data["filters"] = {}
        return data


@extend_schema_view(get=extend_schema(summary="List audited reads"))
class AuditEventListApi(ListAPIView):
    """Audited reads, newest first, filtered by memory, actor, action, correlation id or time."""

    permission_classes = [IsAgent | IsPerson]
    queryset = AccessEvent.objects.none()  # names the model for the schema; get_queryset scopes it
    serializer_class = AccessEventOutput
    pagination_class = CreatedCursorPagination
    filterset_class = AccessEventFilter

    @reads_from_replica
    def get(self, request, *args, **kwargs):
        return self.list(request, *args, **kwargs)

    def get_queryset(self):
        if isinstance(self.request.user, Agent):
            return access_events(tenant_ids=[self.request.user.tenant_id])
        return access_events(tenant_ids=viewable_tenants(self.request.user).values("pk"))
