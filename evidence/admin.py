from django.contrib import admin

from core.admin import ReadOnlyAdmin
from evidence.models import EvidenceRevision, EvidenceSource


class EvidenceRevisionInline(admin.TabularInline):
    model = EvidenceRevision
    fields = ["revision", "status", "content_hash", "created_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(EvidenceSource)
class EvidenceSourceAdmin(ReadOnlyAdmin):
    list_display = ["external_ref", "kind", "tenant", "latest_revision", "created_by", "created_at"]
    list_filter = ["tenant", "kind"]
    list_select_related = ["tenant", "created_by__tenant"]
    search_fields = ["external_ref", "=id"]
    inlines = [EvidenceRevisionInline]


@admin.register(EvidenceRevision)
class EvidenceRevisionAdmin(ReadOnlyAdmin):
    """Revisions are immutable; invalidation is a workflow, not an edit."""

    list_display = ["source", "revision", "status", "content_hash", "tenant", "created_at"]
    list_filter = ["tenant", "status"]
    list_select_related = ["source", "tenant"]
    search_fields = ["=source__id", "content_hash"]
