"""Registrations in the admin: read-only, except a draft's document for operators who may change it.

Saving goes through ``edit_draft`` (the same checks as the command); a
validated, requested, active or superseded row is never editable here, and
nothing is published from the admin: publishing is a proposal.
"""

from django import forms
from django.contrib import admin

from core.forms import StrictJSONField
from registrations.document import check_document
from registrations.errors import InvalidRegistration
from registrations.models import Registration
from registrations.services import edit_draft
from tenancy.admin import TenantScopedAdmin


class DraftForm(forms.ModelForm):
    class Meta:
        model = Registration
        fields = ["document"]
        field_classes = {"document": StrictJSONField}

    def clean_document(self):
        document = self.cleaned_data["document"]
        try:
            check_document(document)
        except InvalidRegistration as refusal:
            raise forms.ValidationError(
                [f"{p['path']}: {p['message']}" for p in refusal.extra["problems"]]
            ) from refusal
        return document


@admin.register(Registration)
class RegistrationAdmin(TenantScopedAdmin):
    form = DraftForm
    list_display = ["__str__", "tenant", "status", "version", "base_version", "created_by", "created_at"]
    list_filter = ["tenant", "status"]
    search_fields = ["=id", "fingerprint"]
    fields = [
        "tenant",
        "status",
        "version",
        "base_version",
        "fingerprint",
        "created_by",
        "published_at",
        "receipt_id",
        "validation",
        "document",
    ]

    def get_readonly_fields(self, request, obj=None):
        editable = obj is not None and obj.is_editable and self.has_change_permission(request, obj)
        return [name for name in self.fields if not (editable and name == "document")]

    def has_add_permission(self, request, *args):
        return False  # drafts start from the command (manage.py registration draft)

    def has_change_permission(self, request, obj=None):
        if obj is not None and not obj.is_editable:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        edit_draft(candidate=obj, document=form.cleaned_data["document"])
