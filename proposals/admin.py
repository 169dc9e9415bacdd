from django.contrib import admin

from memory_core.admin import render_as_read
from memory_core.people import current_memory, person_rule, proposed_memory, readable_content
from memory_core.return_modes import MASK
from proposals.models import Proposal, ProposalEvidence
from tenancy.admin import TenantReadOnlyAdmin, TenantReadOnlyHistoryAdmin

# The proposal columns that carry memory content (or the agent's words about it).
CONTENT_COLUMNS = ("fields", "rationale", "dedupe_key")


@admin.register(ProposalEvidence)
class ProposalEvidenceAdmin(TenantReadOnlyAdmin):
    list_display = ["proposal", "evidence_revision", "tenant"]
    list_filter = ["tenant"]
    list_select_related = ["proposal", "evidence_revision__source", "tenant"]
    search_fields = ["=proposal__id", "=evidence_revision__source__id"]


@admin.register(Proposal)
class ProposalAdmin(TenantReadOnlyHistoryAdmin):
    """Proposals are read-only here; decisions go through the review workflow.

    The frozen fields and rationale are shown as the read policy would show a
    person the memory they propose (and its target today, if stricter).
    """

    list_display = [
        "id",
        "action",
        "status",
        "classification",
        "matched_rule",
        "submitted_by",
        "tenant",
        "created_at",
    ]
    list_filter = ["tenant", "status", "classification", "action"]
    list_select_related = ["tenant", "submitted_by__tenant"]
    search_fields = ["=id", "=target_id", "=dedupe_key"]
    date_hierarchy = "created_at"
    history_withheld_fields = CONTENT_COLUMNS
    exclude = CONTENT_COLUMNS
    readonly_fields = ["fields_as_read"]

    @admin.display(description="fields and rationale")
    def fields_as_read(self, proposal):
        fields = proposal.fields or {}
        current = current_memory(proposal.target_id)
        proposed = proposed_memory(fields=fields, facts=proposal.policy_facts or {}, current=current)
        rule = person_rule(proposed, current)
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
