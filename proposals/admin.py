from django.contrib import admin

from core.admin import ReadOnlyAdmin, ReadOnlyHistoryAdmin
from proposals.models import Proposal, ProposalEvidence


@admin.register(ProposalEvidence)
class ProposalEvidenceAdmin(ReadOnlyAdmin):
    list_display = ["proposal", "evidence_revision", "tenant"]
    list_filter = ["tenant"]
    list_select_related = ["proposal", "evidence_revision__source", "tenant"]
    search_fields = ["=proposal__id", "=evidence_revision__source__id"]


@admin.register(Proposal)
class ProposalAdmin(ReadOnlyHistoryAdmin):
    """Proposals are read-only here; decisions go through the review workflow."""

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
    search_fields = ["=id", "=target_memory_id", "dedupe_key"]
    date_hierarchy = "created_at"
