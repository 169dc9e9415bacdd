import json
from typing import cast

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html

from memory_core.models import Memory, MemoryEvidence, MemoryQuerySet, RecallFeedback
from memory_core.people import CONTENT_FIELDS, current_memory, person_rule, readable_content
from tenancy.admin import TenantReadOnlyAdmin, TenantReadOnlyHistoryAdmin


def render_as_read(shown: dict, rule) -> str:
    """Show what the read policy lets a person see, and which rule decided."""
    verdict = f"{rule.mode} (read rule {rule.id})"
    if not shown:
        return format_html("<p>Content withheld: {}</p>", verdict)
    text = json.dumps(shown, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    return format_html("<pre>{}</pre><p>Shown as {}</p>", text, verdict)


class MemoryEvidenceInline(admin.TabularInline):
    model = MemoryEvidence
    fields = readonly_fields = ("memory_revision", "evidence_revision", "content_hash")
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(MemoryEvidence)
class MemoryEvidenceAdmin(TenantReadOnlyAdmin):
    list_display = ["memory", "memory_revision", "evidence_revision", "content_hash", "tenant"]
    list_filter = ["tenant"]
    list_select_related = ["memory", "evidence_revision__source", "tenant"]
    search_fields = ["=memory__id", "=evidence_revision__source__id"]


@admin.register(Memory)
class MemoryAdmin(TenantReadOnlyHistoryAdmin):
    """Memories are shown with their history; only the executor changes them.

    Content (and the dedupe key and state reason) is shown only as the read
    policy gives it to a person (``memory_core.people``), on the memory and on
    each of its revisions; it never appears in the list of changes.
    """

    list_display = ["id", "type", "scope", "state", "revision", "tenant", "updated_at"]
    list_filter = ["tenant", "state", "type", "scope", "sensitivity"]
    list_select_related = ["tenant"]
    search_fields = ["=id", "=dedupe_key", "subject_id"]
    inlines = [MemoryEvidenceInline]
    history_list_display = ["revision", "state"]
    history_withheld_fields = CONTENT_FIELDS
    exclude = CONTENT_FIELDS
    readonly_fields = ["content_as_read"]

    def get_queryset(self, request: HttpRequest) -> MemoryQuerySet:
        # Memory.objects' queryset, which the tenant lines type only as a QuerySet.
        return cast(MemoryQuerySet, super().get_queryset(request)).with_fence()

    @admin.display(description="content")
    def content_as_read(self, memory):
        """``memory`` is the memory now, or one of its revisions: the stricter of the two views wins."""
        now = memory if hasattr(memory, "fenced") else current_memory(memory.pk)
        memory.fenced = now.is_fenced if now is not None else False
        rule = person_rule(memory, now)
        return render_as_read(readable_content(memory, rule), rule)


@admin.register(RecallFeedback)
class RecallFeedbackAdmin(TenantReadOnlyAdmin):
    """Agents' votes on recalled items: append-only, shown as recorded (ids, never content)."""

    list_display = ["created_at", "verdict", "memory_id", "revision", "agent", "recall", "tenant"]
    list_filter = ["tenant", "verdict"]
    list_select_related = ["agent", "recall", "tenant"]
    search_fields = ["=memory_id", "=recall__id"]
