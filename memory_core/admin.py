import json
from typing import Any, cast

from django.contrib import admin
from django.db.models import Case, TextField, Value, When
from django.db.models.fields.json import KT
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import capfirst

from core.admin import ReadInFullSearchMixin
from memory_core.labels import choice_label
from memory_core.models import Memory, MemoryEvidence, MemoryQuerySet, RecallFeedback
from memory_core.people import (
    CONTENT_FIELDS,
    Excerpt,
    current_memory,
    person_rule,
    readable_content,
    rows_read_in_full,
    statement_excerpt,
)
from memory_core.read_policy import mode_label
from tenancy.admin import TenantReadOnlyAdmin, TenantReadOnlyHistoryAdmin

LIST_EXCERPT_CHARS = 80
LIST_CSS = "memory_core/lists.css"  # the memory and proposal lists' columns


def render_as_read(shown: dict, rule) -> str:
    """Show what the read policy lets a person see, and which rule decided (in words, the mode on hover)."""
    verdict = format_html(
        '<span title="{}">{}</span> (read rule {})', rule.mode, mode_label(rule.mode), rule.id
    )
    if not shown:
        return format_html("<p>Content: {}</p>", verdict)
    text = json.dumps(shown, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    return format_html("<pre>{}</pre><p>Shown as {}</p>", text, verdict)


def withheld_note(mode: str) -> SafeString:
    """Say in words that a view hid a statement (the mode's name on hover)."""
    return format_html('<em class="quiet" title="{}">{}</em>', mode, capfirst(mode_label(mode)))


def excerpt_cell(excerpt: Excerpt) -> SafeString | str:
    """A list cell: the excerpt in quotes, or why there is none."""
    if excerpt.withheld:
        return withheld_note(excerpt.withheld)
    return format_html("“{}”", excerpt.text) if excerpt.text else "—"


def subject_cell(kind: str, subject_id: str) -> SafeString | str:
    """``kind:id``, the whole of a long id on hover."""
    if not subject_id:
        return "—"
    return format_html('<span title="{}:{}">{}:{}</span>', kind, subject_id, kind, _short(subject_id))


def date_cell(moment) -> SafeString:
    """A list's date over its time (UTC), narrow beside an excerpt, as the receipts list shows it."""
    return format_html('{}<br><span class="quiet">{}</span>', f"{moment:%Y-%m-%d}", f"{moment:%H:%M}")


def _short(text: str, chars: int = 40) -> str:
    return text if len(text) <= chars else f"{text[: chars - 1]}…"


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
class MemoryAdmin(ReadInFullSearchMixin, TenantReadOnlyHistoryAdmin):
    """Memories are shown with their history; only the executor changes them.

    Content (and the dedupe key and state reason) is shown only as the read
    policy gives it to a person (``memory_core.people``), on the memory and on
    each of its revisions, and in the list's excerpt; it never appears in the
    list of changes. A search matches ids, subject ids and types (metadata,
    shown in every view), and statements and dedupe keys only of the memories
    a person reads in full (``content_search_aliases``).
    """

    list_display = ["subject", "kind", "state_now", "statement", "tenant", "when"]
    list_display_links = ["subject"]
    list_filter = ["tenant", "state", "type", "scope", "sensitivity"]
    list_select_related = ["tenant"]
    search_fields = ["=id", "subject_id", "type", "statement_read_in_full", "=dedupe_key_read_in_full"]
    inlines = [MemoryEvidenceInline]
    history_list_display = ["revision", "state"]
    history_withheld_fields = CONTENT_FIELDS
    exclude = CONTENT_FIELDS
    readonly_fields = ["content_as_read"]

    def get_queryset(self, request: HttpRequest) -> MemoryQuerySet:
        # Memory.objects' queryset, which the tenant lines type only as a QuerySet.
        return cast(MemoryQuerySet, super().get_queryset(request)).with_fence()

    def content_search_aliases(self, request: HttpRequest) -> dict[str, Any]:
        """The statement and dedupe key of the memories a person reads raw; empty in every other row."""
        readable = rows_read_in_full()
        return {
            "statement_read_in_full": Case(
                When(readable, then=KT("content__statement")), default=Value(""), output_field=TextField()
            ),
            "dedupe_key_read_in_full": Case(
                When(readable, then="dedupe_key"), default=Value(""), output_field=TextField()
            ),
        }

    class Media:
        css = {"all": [LIST_CSS]}

    @admin.display(description="updated", ordering="updated_at")
    def when(self, memory: Memory) -> SafeString:
        return date_cell(memory.updated_at)

    @admin.display(description="about", ordering="subject_id")
    def subject(self, memory: Memory) -> SafeString | str:
        return subject_cell(memory.subject_kind, memory.subject_id)

    @admin.display(description="type", ordering="type")
    def kind(self, memory: Memory) -> str:
        return choice_label("type", memory.type).lower()

    @admin.display(description="state", ordering="state")
    def state_now(self, memory: Memory) -> SafeString:
        """The state and revision (and the fence, which the read policy treats as a state)."""
        state = memory.get_state_display().lower() + (", fenced" if memory.is_fenced else "")
        return format_html('{}<br><span class="quiet">revision {}</span>', state, memory.revision)

    @admin.display(description="statement")
    def statement(self, memory: Memory) -> SafeString | str:
        """The statement as the memory's own page shows it to this person (``content_as_read``), cut short."""
        return excerpt_cell(statement_excerpt(memory, person_rule(memory), LIST_EXCERPT_CHARS))

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
