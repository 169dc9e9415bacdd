"""Erasures in the admin: operators holding ``tenancy.erase_subject`` ask for one; everyone follows it.

Asking goes through ``request_erasure`` (the tenant's system agent submits, the
operator is recorded and never counts as an approver); reviewers decide in the
review pages; nothing is removed here.
"""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from core.errors import DomainError
from erasure.models import Erasure
from erasure.services import request_erasure
from memory_core.models import Memory
from tenancy.admin import TenantReadOnlyAdmin
from tenancy.models import Tenant
from tenancy.selectors import erasing_tenants


class ErasureRequestForm(forms.Form):
    tenant: "forms.ModelChoiceField[Tenant]" = forms.ModelChoiceField(queryset=Tenant.objects.none())
    subject_kind = forms.ChoiceField(choices=Memory.SubjectKind.choices, required=False)
    subject_id = forms.CharField(max_length=256, required=False, help_text="whom to forget")
    evidence_id = forms.UUIDField(required=False, help_text="or an evidence source to retract")
    reason = forms.CharField(max_length=2000, widget=forms.Textarea)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if bool(data.get("subject_id")) == bool(data.get("evidence_id")):
            raise forms.ValidationError("Name a subject (kind and id) or an evidence source, not both.")
        return data

    def erasure(self) -> dict[str, Any]:
        data = self.cleaned_data
        if data.get("subject_id"):
            return {"subject": {"kind": data["subject_kind"] or "user", "id": data["subject_id"]}}
        return {"source": {"evidence_id": str(data["evidence_id"])}}

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["tenant"].queryset = erasing_tenants(user)  # type: ignore[attr-defined]  # per operator


@admin.register(Erasure)
class ErasureAdmin(TenantReadOnlyAdmin):
    list_display = ["id", "tenant", "status", "classification", "members", "created_at"]
    list_filter = ["tenant", "status"]
    fields = ["id", "tenant", "status", "classification", "required_approvals", "fields", "created_at"]

    @admin.display(description="memories")
    def members(self, erasure: Erasure) -> int:
        return len((erasure.fields or {}).get("members", []))

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return erasing_tenants(request.user).exists()

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> HttpResponse:
        """Ask for an erasure of a subject or a source; it goes to the review queue with its plan."""
        if not self.has_add_permission(request):
            return HttpResponseRedirect(reverse("admin:erasure_erasure_changelist"))
        form = ErasureRequestForm(request.POST or None, user=request.user)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                erasure = request_erasure(
                    tenant=data["tenant"],
                    erasure=form.erasure(),
                    reason=data["reason"],
                    requested_by=request.user,
                )
            except DomainError as refusal:
                form.add_error(None, refusal.detail or refusal.title)
            else:
                count = len(erasure.fields.get("members", []))
                messages.success(request, f"Erasure planned: {count} memories, sent to review.")
                return HttpResponseRedirect(reverse("reviews:proposal", args=[erasure.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Ask to erase a subject or retract a source",
            "form": form,
        }
        return TemplateResponse(request, "admin/erasure/erasure/request.html", context)
