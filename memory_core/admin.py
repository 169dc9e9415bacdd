from django.contrib import admin

from core.admin import ReadOnlyAdmin, ReadOnlyHistoryAdmin
from memory_core.models import Memory, MemoryEvidence


class MemoryEvidenceInline(admin.TabularInline):
    model = MemoryEvidence
    fields = ["memory_revision", "evidence_revision", "content_hash"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(MemoryEvidence)
class MemoryEvidenceAdmin(ReadOnlyAdmin):
    list_display = ["memory", "memory_revision", "evidence_revision", "content_hash", "tenant"]
    list_filter = ["tenant"]
    list_select_related = ["memory", "evidence_revision__source", "tenant"]
    search_fields = ["=memory__id", "=evidence_revision__source__id"]


@admin.register(Memory)
class MemoryAdmin(ReadOnlyHistoryAdmin):
    """Memories are shown with their history; only the executor changes them."""

    list_display = ["id", "type", "scope", "state", "revision", "tenant", "updated_at"]
    list_filter = ["tenant", "state", "type", "scope", "sensitivity"]
    list_select_related = ["tenant"]
    search_fields = ["=id", "dedupe_key", "subject_id"]
    inlines = [MemoryEvidenceInline]
    history_list_display = ["revision", "state"]
