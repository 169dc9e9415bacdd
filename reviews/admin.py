from django.contrib import admin

from reviews.models import ReviewDecision
from tenancy.admin import TenantReadOnlyHistoryAdmin


@admin.register(ReviewDecision)
class ReviewDecisionAdmin(TenantReadOnlyHistoryAdmin):
    """Decisions are immutable: no add, change or delete here either."""

    list_display = ["created_at", "decision", "actor", "represented_owner", "proposal", "tenant", "channel"]
    list_filter = ["decision", "tenant", "actor", "channel", "created_at"]
    list_select_related = ["actor", "tenant", "proposal"]
    search_fields = ["=proposal__id", "=id", "represented_owner"]
    date_hierarchy = "created_at"
