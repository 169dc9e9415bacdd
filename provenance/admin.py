"""The evidence admin: browse sources and revisions; invalidation is an action with consequences.

Registered here, above the evidence app, because invalidating fences memories
and blocks proposals (``provenance.services``).
"""

from django.contrib import admin, messages

from evidence.models import EvidenceRevision, EvidenceSource
from provenance.services import invalidate_evidence_revision
from tenancy.admin import OPERATE, TenantReadOnlyAdmin


class EvidenceRevisionInline(admin.TabularInline):
    model = EvidenceRevision
    fields = readonly_fields = ("revision", "status", "content_hash", "created_at")
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(EvidenceSource)
class EvidenceSourceAdmin(TenantReadOnlyAdmin):
    list_display = ["external_ref", "kind", "tenant", "latest_revision", "created_by", "created_at"]
    list_filter = ["tenant", "kind"]
    list_select_related = ["tenant", "created_by__tenant"]
    search_fields = ["external_ref", "=id"]
    inlines = [EvidenceRevisionInline]


@admin.register(EvidenceRevision)
class EvidenceRevisionAdmin(TenantReadOnlyAdmin):
    """Revisions are immutable; invalidation is a workflow, not an edit."""

    list_display = ["source", "revision", "status", "content_hash", "tenant", "created_at"]
    list_filter = ["tenant", "status"]
    list_select_related = ["source", "tenant"]
    search_fields = ["=source__id", "content_hash"]
    actions = ["invalidate"]

    @admin.action(
        description="Invalidate selected revisions (fences the memories resting on them)",
        permissions=["invalidate"],
    )
    def invalidate(self, request, queryset):
        if self.refuse_foreign_rows(request, queryset):
            return
        for revision in queryset:
            invalidate_evidence_revision(
                revision=revision, reason=f"invalidated by {request.user.get_username()}"
            )
        self.message_user(request, f"Invalidated {queryset.count()} revision(s).", messages.SUCCESS)

    def has_invalidate_permission(self, request):
        """The model permission, and deciding rights in some tenant (each row's tenant is checked too)."""
        return request.user.has_perm("evidence.invalidate_evidencerevision") and self._within(
            request, None, OPERATE
        )
