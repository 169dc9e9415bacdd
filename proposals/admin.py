from typing import Any

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db.models import Case, TextField, Value, When
from django.db.models.fields.json import KT
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString

from core.admin import ReadInFullSearchMixin
from memory_core.admin import LIST_CSS, excerpt_cell, render_as_read, subject_cell
from memory_core.labels import choice_label
from memory_core.people import current_memory, readable_content
from memory_core.return_modes import MASK
from proposals.models import Proposal, ProposalEvidence
from proposals.people import attach_person_views, proposed_for_person, with_facts_as_read
from tenancy.admin import TenantReadOnlyAdmin, TenantReadOnlyHistoryAdmin

# The proposal columns that carry memory content (or the agent's words about it).
CONTENT_COLUMNS = ("fields", "rationale", "dedupe_key")


@admin.register(ProposalEvidence)
class ProposalEvidenceAdmin(TenantReadOnlyAdmin):
    list_display = ["proposal", "evidence_revision", "tenant"]
    list_filter = ["tenant"]
    list_select_related = ["proposal", "evidence_revision__source", "tenant"]
    search_fields = ["=proposal__id", "=evidence_revision__source__id"]


class ProposalChangeList(ChangeList):
    """Each page's proposals carry their subject and excerpt as a person reads them (one query a page)."""

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        self.result_list = attach_person_views(self.result_list)


@admin.register(Proposal)
class ProposalAdmin(ReadInFullSearchMixin, TenantReadOnlyHistoryAdmin):
    """Proposals are read-only here; decisions go through the review workflow.

    The frozen fields and rationale are shown as the read policy would show a
    person the memory they propose (and its target today, if stricter), on the
    proposal's page and in the list's excerpt (``proposals.people``). A search
    matches ids, subject ids and types (metadata), and statements and dedupe
    keys only of the proposals a person reads in full.
    """

    list_display = [
        "subject",
        "kind",
        "state_now",
        "statement",
        "proposed",
        "tenant",
    ]
    list_display_links = ["subject"]
    list_filter = ["tenant", "status", "classification", "action"]
    list_select_related = ["tenant", "submitted_by__tenant"]
    search_fields = [
        "=id",
        "=target_id",
        "subject_id_as_read",
        "memory_type",
        "statement_read_in_full",
        "=dedupe_key_read_in_full",
    ]
    date_hierarchy = "created_at"
    history_withheld_fields = CONTENT_COLUMNS
    exclude = CONTENT_COLUMNS
    readonly_fields = ["fields_as_read"]

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return ProposalChangeList

    def get_search_results(self, request, queryset, search_term):
        if search_term:
            queryset = with_facts_as_read(queryset)
        return super().get_search_results(request, queryset, search_term)

    def content_search_aliases(self, request: HttpRequest) -> dict[str, Any]:
        """The statement and dedupe key of the proposals a person reads raw (``with_facts_as_read``)."""
        return {
            "statement_read_in_full": Case(
                When(read_in_full=True, then=KT("fields__content__statement")),
                default=Value(""),
                output_field=TextField(),
            ),
            "dedupe_key_read_in_full": Case(
                When(read_in_full=True, then="dedupe_key"), default=Value(""), output_field=TextField()
            ),
        }

    class Media:
        css = {"all": [LIST_CSS]}

    @admin.display(description="proposed", ordering="created_at")
    def proposed(self, proposal: Proposal) -> SafeString:
        """Who proposed it, over when (UTC)."""
        return format_html(
            '{}<br><span class="quiet">{}</span>',
            proposal.submitted_by.name,
            f"{proposal.created_at:%Y-%m-%d %H:%M}",
        )

    @admin.display(description="about")
    def subject(self, proposal: Proposal) -> SafeString | str:
        shown = proposal.as_read  # type: ignore[attr-defined]
        return subject_cell(shown.subject_kind, shown.subject_id)

    @admin.display(description="type", ordering="memory_type")
    def kind(self, proposal: Proposal) -> str:
        return choice_label("type", proposal.memory_type).lower() if proposal.memory_type else "—"

    @admin.display(description="action, status", ordering="status")
    def state_now(self, proposal: Proposal) -> SafeString:
        return format_html(
            '{}<br><span class="quiet">{}</span>',
            proposal.get_action_display().lower(),
            proposal.get_status_display().lower(),
        )

    @admin.display(description="statement")
    def statement(self, proposal: Proposal) -> SafeString | str:
        """The statement as the proposal's page shows it to this person (``fields_as_read``), cut short."""
        return excerpt_cell(proposal.as_read.excerpt)  # type: ignore[attr-defined]

    @admin.display(description="fields and rationale")
    def fields_as_read(self, proposal):
        fields = proposal.fields or {}
        current = current_memory(proposal.target_id)
        proposed, rule = proposed_for_person(proposal, current)
        allowed = readable_content(proposed, rule)
        if not allowed:
            return render_as_read({}, rule)
        shown = dict(fields)
        for frozen, name in (
            ("content", "content"),
            ("dedupe_key", "dedupe_key"),
            ("reason", "state_reason"),
        ):
            if frozen in shown:
                shown[frozen] = allowed.get(name, MASK)
        shown["rationale"] = proposal.rationale if rule.mode == "raw" else MASK
        return render_as_read(shown, rule)
