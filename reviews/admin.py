from django.contrib import admin

from core.admin import ReadOnlyHistoryAdmin
from reviews.models import ReviewDecision


@admin.register(ReviewDecision)
class ReviewDecisionAdmin(ReadOnlyHistoryAdmin):
    """Decisions are immutable: no add, change or delete here either."""

    list_display = ["created_at", "decision", "actor", "represented_owner", "proposal", "tenant", "channel"]
    list_filter = ["decision", "tenant", "actor", "channel", "created_at"]
    list_select_related = ["actor", "tenant", "proposal"]
    search_fields = ["=proposal__id", "=id", "represented_owner"]
    date_hierarchy = "created_at"
