"""Operators manage their tenants' webhook endpoints here and watch (and replay) deliveries.

Drawn along tenant lines (``tenancy.admin.TenantScopedAdmin``): a person sees endpoints and
deliveries only of tenants they may view, and changes them only where they decide. The
signing secret is shown only to whoever may change the endpoint, never to a viewer.
"""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from notifications.events import EVENT_TYPES
from notifications.models import (
    DeliveryAttempt,
    EmailDelivery,
    EmailPreference,
    WebhookDelivery,
    WebhookEndpoint,
)
from notifications.services import replay_deliveries
from tenancy.admin import OPERATE, TenantReadOnlyAdmin, TenantScopedAdmin


class WebhookEndpointForm(forms.ModelForm):
    event_types = forms.MultipleChoiceField(
        choices=[(t, t) for t in EVENT_TYPES], widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["tenant", "url", "event_types", "format", "active", "description"]


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(TenantScopedAdmin):
    form = WebhookEndpointForm
    list_display = ["url", "tenant", "format", "active", "created_at"]
    list_filter = ["tenant", "active", "format"]
    search_fields = ["url", "description"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is not None and self.has_change_permission(request, obj):
            return ["secret"]
        return []

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        fields = ["tenant", "url", "event_types", "format", "active", "description"]
        return [*fields, "secret"] if obj is not None and self.has_change_permission(request, obj) else fields


class DeliveryAttemptInline(admin.TabularInline):
    model = DeliveryAttempt
    fields = ["started_at", "duration_ms", "status_code", "error_class", "excerpt"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(TenantReadOnlyAdmin):
    list_display = [
        "created_at",
        "tenant",
        "event_type",
        "endpoint",
        "status",
        "attempts",
        "last_status_code",
    ]
    readonly_fields = ["id", "tenant", "endpoint", "event_type", "payload", "status", "attempts"]
    list_filter = ["tenant", "status", "event_type"]
    list_select_related = ["tenant", "endpoint"]
    search_fields = ["=id"]
    inlines = [DeliveryAttemptInline]
    actions = ["replay"]

    @admin.action(
        description="Replay selected dead or failing deliveries (same webhook-id)", permissions=["replay"]
    )
    def replay(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        if self.refuse_foreign_rows(request, queryset, OPERATE):
            return
        count = replay_deliveries(delivery_ids=list(queryset.values_list("id", flat=True)))
        self.message_user(request, f"{count} deliveries queued again.", messages.SUCCESS)

    def has_replay_permission(self, request: HttpRequest) -> bool:
        """Operators replay: the model's change permission and deciding rights in some tenant."""
        return request.user.has_perm("notifications.change_webhookdelivery") and self._within(
            request, None, OPERATE
        )


@admin.register(EmailPreference)
class EmailPreferenceAdmin(admin.ModelAdmin):
    """Each person chooses how they hear of reviews; only superusers see or set anyone else's."""

    list_display = ["user", "mode"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[EmailPreference]:
        rows = super().get_queryset(request)
        return rows if request.user.is_superuser else rows.filter(user=request.user)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["user", "mode"] if request.user.is_superuser else ["mode"]

    def save_model(self, request: HttpRequest, obj: EmailPreference, form: Any, change: bool) -> None:
        if not request.user.is_superuser:
            obj.user = request.user  # type: ignore[assignment]
        super().save_model(request, obj, form, change)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser or not EmailPreference.objects.filter(user=request.user).exists()

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request) and (
            obj is None or request.user.is_superuser or obj.user_id == request.user.pk
        )


@admin.register(EmailDelivery)
class EmailDeliveryAdmin(TenantReadOnlyAdmin):
    list_display = [
        "created_at",
        "tenant",
        "event_type",
        "user",
        "digest",
        "status",
        "attempts",
        "last_error",
    ]
    list_filter = ["tenant", "status", "digest"]
    list_select_related = ["tenant", "user"]
