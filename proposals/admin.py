from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from proposals.models import Proposal


@admin.register(Proposal)
class ProposalAdmin(SimpleHistoryAdmin):
    """Proposals are read-only here; decisions go through the review workflow."""

    list_display = [
        "id",
        "action",
        "status",
        "classification",
        "matched_rule",
        "submitted_by",
        "tenant",
        "created_at",
    ]
    list_filter = ["tenant", "status", "classification", "action"]
    list_select_related = ["tenant", "submitted_by__tenant"]
    search_fields = ["=id", "=target_memory_id", "dedupe_key"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def revert_disabled(self, request, obj=None):
        return True
