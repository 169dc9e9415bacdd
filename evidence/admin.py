from django.contrib import admin, messages

from core.admin import ReadOnlyAdmin
from evidence.models import EvidenceRevision, EvidenceSource
from evidence.services import invalidate_evidence_revision


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
    actions = ["invalidate"]

    @admin.action(description="Invalidate selected revisions (fences the memories resting on them)")
    def invalidate(self, request, queryset):
        if not request.user.has_perm("evidence.invalidate_evidencerevision"):
            self.message_user(request, "You may not invalidate evidence.", messages.ERROR)
            return
        for revision in queryset:
            invalidate_evidence_revision(
                revision=revision, reason=f"invalidated by {request.user.get_username()}"
            )
        self.message_user(request, f"Invalidated {queryset.count()} revision(s).", messages.SUCCESS)
