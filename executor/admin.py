"""Auditors browse receipts here; everything is read-only."""

import json
import shlex
from collections.abc import Callable
from typing import Any
from uuid import UUID

from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import unquote
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    JsonResponse,
    StreamingHttpResponse,
)
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_POST, require_safe

from core.admin import CappedCountPaginator
from executor.chain_panel import verification_cell
from executor.export import csv_lines, jsonl_lines
from executor.models import ChainVerification, Receipt, ReceiptChain
from executor.presenters import attach_page
from executor.services import request_chain_verification, requeue_dead_entry
from executor.story import receipt_story
from executor.timeline import memory_timeline
from memory_core.admin import withheld_note
from memory_core.labels import choice_label
from proposals.models import OutboxEntry
from tenancy.admin import OPERATE, VIEW, TenantReadOnlyAdmin


class ReceiptChangeList(ChangeList):
    """Each page's receipts carry their summary and decisions, fetched for the page at once."""

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        self.result_list = attach_page(self.result_list)


@admin.register(Receipt)
class ReceiptAdmin(TenantReadOnlyAdmin):
    """Each row reads as a sentence: when, where, what changed, who proposed and decided, how it ended.

    Content is excerpted only as the read policy shows it to a person; the
    page costs the same number of queries whatever its size.
    """

    list_display = [
        "when",
        "tenant",
        "change",
        "proposed_by",
        "decided_by",
        "evidence_cited",
        "outcome",
    ]
    list_display_links = ["when"]
    list_filter = ["tenant", "outcome", "created_at"]
    list_select_related = ["tenant", "proposal__submitted_by"]
    search_fields = ["=proposal__id", "=proposal__dreaming_run__id", "=memory_id", "=id", "hash"]
    # No date_hierarchy: its MIN/MAX and DISTINCT day scans cost 400 ms at a million
    # receipts; the created_at filter above needs no query.
    show_full_result_count = False
    paginator = CappedCountPaginator
    # Chain order, newest first: the head an auditor checks comes first, and a batch's receipts
    # (one created_at for all) keep their sequence. Along receipt_unique_seq (tenant, seq),
    # read backwards: never a sort of the whole table. ``tenant_id``, not ``tenant``: the
    # relation would order by the tenant's name, a join and a sort.
    ordering = ["-tenant_id", "-seq"]
    # The change page tells the story (templates/admin/executor/receipt/change_form.html, from
    # executor.story); the form behind it needs no columns.
    fields = ["seq"]

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return ReceiptChangeList

    def get_urls(self) -> list[URLPattern]:
        name = f"{self.opts.app_label}_{self.opts.model_name}"

        def view(function: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
            return self.admin_site.admin_view(require_safe(function))

        return [
            path("memory/<uuid:memory_id>/", view(self.timeline_view), name=f"{name}_timeline"),
            path("export.csv", view(self.export_view), {"fmt": "csv"}, name=f"{name}_export_csv"),
            path("export.jsonl", view(self.export_view), {"fmt": "jsonl"}, name=f"{name}_export_jsonl"),
            *super().get_urls(),
        ]

    def timeline_view(self, request: HttpRequest, memory_id: UUID) -> TemplateResponse:
        """Every revision of one memory with its receipt, decisions and evidence (read-only)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        timeline = memory_timeline(self.get_queryset(request), memory_id)
        if timeline is None:
            raise Http404("No receipt of this memory in the tenants you may see")
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": timeline.title,
            "timeline": timeline,
        }
        return TemplateResponse(request, "admin/executor/receipt/timeline.html", context)

    def export_view(self, request: HttpRequest, fmt: str) -> HttpResponseBase:
        """Stream the receipts the list shows (same filters, same tenant lines) as CSV or JSON Lines."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            selected = self.get_changelist_instance(request).queryset
        except IncorrectLookupParameters:
            return JsonResponse(
                {"code": "bad_filter", "title": "The export's filters are not valid", "status": 400},
                status=400,
                content_type="application/problem+json",
            )
        stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
        if fmt == "csv":
            response = StreamingHttpResponse(csv_lines(selected), content_type="text/csv; charset=utf-8")
        else:
            lines = jsonl_lines(
                selected, exported_by=request.user.get_username(), filters=request.GET.urlencode()
            )
            response = StreamingHttpResponse(lines, content_type="application/jsonl; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="receipts-{stamp}.{fmt}"'
        return response

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        """Tell the receipt's whole story on one page; a receipt the viewer cannot see answers as missing."""
        receipt = self.get_object(request, unquote(object_id))
        if receipt is not None and self.has_view_permission(request, receipt):
            extra_context = {**(extra_context or {}), "story": receipt_story(receipt, viewer=request.user)}
        return super().change_view(request, object_id, form_url, extra_context)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Receipt]:
        return super().get_queryset(request).select_related("tenant", "proposal__submitted_by")

    @admin.display(description="when", ordering="created_at")
    def when(self, receipt: Receipt) -> SafeString:
        return format_html(
            '{}<br><span class="quiet">#{}</span>', receipt.created_at.strftime("%Y-%m-%d %H:%M"), receipt.seq
        )

    @admin.display(description="change")
    def change(self, receipt: Receipt) -> SafeString:
        proposal = receipt.proposal
        kind = choice_label("type", proposal.memory_type).lower() if proposal.memory_type else "memory"
        summary = receipt.summary
        text: str
        if summary.withheld:
            text = withheld_note(summary.withheld)
        elif proposal.action in proposal.REMOVING_ACTIONS:
            text = summary.text
        else:
            text = format_html("“{}”", summary.text) if summary.text else ""
        timeline = reverse("admin:executor_receipt_timeline", args=[receipt.memory_id])
        return format_html(
            '<strong>{} {}</strong> <a class="timeline" href="{}">timeline</a><br>{}',
            proposal.get_action_display().lower(),
            kind,
            timeline,
            text,
        )

    @admin.display(description="proposed by")
    def proposed_by(self, receipt: Receipt) -> str:
        return receipt.proposal.submitted_by.name

    @admin.display(description="decided by")
    def decided_by(self, receipt: Receipt) -> str:
        """People who decided, each with their decision and reason on hover."""
        if not receipt.decisions:
            return "—"
        return format_html_join(
            ", ",
            '<span title="{}: {}">{}</span>',
            ((d.get_decision_display().lower(), d.reason, d.actor.get_username()) for d in receipt.decisions),
        )

    @admin.display(description="evidence")
    def evidence_cited(self, receipt: Receipt) -> int:
        return len(receipt.evidence)


@admin.register(OutboxEntry)
class OutboxEntryAdmin(TenantReadOnlyAdmin):
    list_display = ["id", "status", "attempts", "tenant", "proposal_id", "available_at", "last_error"]
    list_filter = ["status", "tenant"]
    list_select_related = ["tenant"]
    search_fields = ["=id", "=proposal__id"]
    actions = ["requeue"]

    @admin.action(
        description="Requeue dead-lettered entries (the executor writes their receipts)",
        permissions=["requeue"],
    )
    def requeue(self, request: HttpRequest, queryset: QuerySet[OutboxEntry]) -> None:
        if self.refuse_foreign_rows(request, queryset, OPERATE):
            return
        requeued = 0
        for entry in queryset.filter(status=OutboxEntry.Status.DEAD, requeued_as__isnull=True):
            requeue_dead_entry(entry=entry, requested_by=request.user.get_username())
            requeued += 1
        self.message_user(request, f"Requeued {requeued} dead entries.", messages.SUCCESS)

    def has_requeue_permission(self, request: HttpRequest) -> bool:
        """Operators requeue: the model's change permission and deciding rights in some tenant.

        Auditors only audit, so they never requeue; each selected row's tenant is checked too.
        """
        return request.user.has_perm("proposals.change_outboxentry") and self._within(request, None, OPERATE)


@admin.register(ReceiptChain)
class ReceiptChainAdmin(TenantReadOnlyAdmin):
    """Each tenant's chain status: head, last verification, last signed checkpoint, and "verify now".

    Verifying runs as a Celery task (``executor.verify_chain``), never in the
    request; the row shows its result once recorded, and the command that does
    the same from a shell.
    """

    list_display = ["tenant", "head", "last_verification", "last_checkpoint", "command_line"]
    list_select_related = ["tenant"]
    actions = ["verify"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[ReceiptChain]:
        latest = ChainVerification.objects.filter(tenant=OuterRef("tenant")).order_by("-requested_at")
        columns = ["status", "requested_at", "finished_at", "head_seq", "problems", "receipts", "total"]
        chains: QuerySet[ReceiptChain] = super().get_queryset(request)
        return chains.annotate(**{f"verification_{c}": Subquery(latest.values(c)[:1]) for c in columns})

    def get_urls(self) -> list[URLPattern]:
        name = f"{self.opts.app_label}_{self.opts.model_name}"
        view = self.admin_site.admin_view
        return [
            path("<uuid:tenant_id>/verification/", view(self.verification_view), name=f"{name}_verification"),
            path("<uuid:tenant_id>/verify/", view(self.verify_view), name=f"{name}_verify"),
            *super().get_urls(),
        ]

    def _visible_chain(self, request: HttpRequest, tenant_id: UUID) -> ReceiptChain:
        chain = self.get_queryset(request).filter(pk=tenant_id).first()
        if chain is None or not self.has_view_permission(request, chain):
            raise Http404("No chain of this tenant among those you may see")
        return chain

    @method_decorator(require_GET)
    def verification_view(self, request: HttpRequest, tenant_id: UUID) -> HttpResponse:
        """The chain's "last verification" cell, which the panel polls while a verification runs."""
        chain = self._visible_chain(request, tenant_id)
        return HttpResponse(verification_cell(chain.tenant_id, _latest_verification(chain)))

    @method_decorator(require_POST)
    def verify_view(self, request: HttpRequest, tenant_id: UUID) -> HttpResponse:
        """Queue a verification (a Celery task runs it, never this request); answer with the polling cell."""
        chain = self._visible_chain(request, tenant_id)
        verification = request_chain_verification(
            tenant_id=chain.tenant_id, requested_by=request.user.get_username()
        )
        return HttpResponse(verification_cell(chain.tenant_id, verification))

    @admin.display(description="head", ordering="seq")
    def head(self, chain: ReceiptChain) -> SafeString:
        return format_html(
            '#{} <code title="{}">{}…</code>', chain.seq, chain.head_hash, chain.head_hash[:12]
        )

    @admin.display(description="last verification")
    def last_verification(self, chain: ReceiptChain) -> SafeString:
        return verification_cell(chain.tenant_id, _latest_verification(chain))

    @admin.display(description="last signed checkpoint")
    def last_checkpoint(self, chain: ReceiptChain) -> str:
        if chain.checkpoint_signed_at is None:
            return "none recorded (manage.py checkpoint_receipts --output FILE)"
        return f"#{chain.checkpoint_seq} signed {chain.checkpoint_signed_at:%Y-%m-%d %H:%M:%S} UTC"

    @admin.display(description="from a shell")
    def command_line(self, chain: ReceiptChain) -> SafeString:
        return format_html(
            "<code>manage.py verify_receipts --tenant {}</code>", shlex.quote(chain.tenant.name)
        )

    @admin.action(
        description="Verify now (runs in the background; the panel shows its progress)", permissions=["view"]
    )
    def verify(self, request: HttpRequest, queryset: QuerySet[ReceiptChain]) -> None:
        if self.refuse_foreign_rows(request, queryset, VIEW):
            return
        for chain in queryset.select_related("tenant"):
            request_chain_verification(tenant_id=chain.tenant_id, requested_by=request.user.get_username())
            self.message_user(request, f"{chain.tenant}: verification queued", messages.SUCCESS)


def _latest_verification(chain: Any) -> ChainVerification | None:
    """The chain's latest verification, from the columns the panel's queryset annotates (no query)."""
    if chain.verification_status is None:
        return None
    problems = chain.verification_problems or []
    if isinstance(problems, str):  # SQLite hands a JSON subquery back as text
        problems = json.loads(problems)
    return ChainVerification(
        tenant_id=chain.tenant_id,
        status=chain.verification_status,
        requested_at=chain.verification_requested_at,
        finished_at=chain.verification_finished_at,
        head_seq=chain.verification_head_seq,
        problems=problems,
        receipts=chain.verification_receipts,
        total=chain.verification_total,
    )
