from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from reviews.models import ReviewDecision


@admin.register(ReviewDecision)
class ReviewDecisionAdmin(SimpleHistoryAdmin):
    """Decisions are immutable: no add, change or delete here either."""

    list_display = ["created_at", "decision", "actor", "represented_owner", "proposal", "tenant", "channel"]
    list_filter = ["decision", "tenant", "actor", "channel", "created_at"]
    list_select_related = ["actor", "tenant", "proposal"]
    search_fields = ["=proposal__id", "=id", "represented_owner"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def revert_disabled(self, request, obj=None):
        return True
