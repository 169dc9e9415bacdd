"""Tenancy's admin, and the tenant lines every admin in the project is drawn with.

A non-superuser sees only rows of the tenants ``tenancy.selectors`` gives them
(reviewers and auditors), and may change, delete or act on rows only in the
tenants where they decide (``decide_proposal``): an auditor never operates.
Everything else is answered exactly as a missing row. Superusers see all.
"""

from typing import Any
from uuid import UUID

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.utils import get_fields_from_path
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Field, ForeignKey, Model, QuerySet
from django.forms import ModelChoiceField
from django.http import HttpRequest
from guardian.admin import GuardedModelAdmin
from simple_history.admin import SimpleHistoryAdmin

from core.admin import ForgedSelectionMixin, ReadOnlyAdmin, ReadOnlyHistoryAdmin, ScopedHistoryMixin
from tenancy.models import Agent, AgentToken, Delegation, DeniedRequest, Tenant, UserToken
from tenancy.selectors import decidable_tenants, viewable_tenants
from tenancy.services import revoke_delegations

VIEW, OPERATE = "view", "operate"
_SELECTORS = {VIEW: viewable_tenants, OPERATE: decidable_tenants}


def tenant_ids(request: HttpRequest, level: str = VIEW) -> frozenset[UUID] | None:
    """Return the ids of the tenants this person may view (or operate) in; None for a superuser.

    Asked once per request and level: every page asks several times.
    """
    if request.user.is_superuser:
        return None
    cache: dict[str, frozenset[UUID]] = request.__dict__.setdefault("_custodian_tenant_ids", {})
    if level not in cache:
        cache[level] = frozenset(_SELECTORS[level](request.user).values_list("pk", flat=True))
    return cache[level]


class TenantListFilter(admin.RelatedFieldListFilter):
    """A tenant filter offering only the tenants the viewer may see (one query on the tenant table)."""

    # The choices are tenant pks (UUIDs), as Django's own are; the stubs say str.
    def field_choices(  # type: ignore[override]
        self, field: "Field[Any, Any]", request: HttpRequest, model_admin: "admin.ModelAdmin[Any]"
    ) -> list[tuple[Any, str]]:
        tenants = Tenant.objects.order_by("name")
        ids = tenant_ids(request)
        if ids is not None:
            tenants = tenants.filter(pk__in=ids)
        return [(tenant.pk, str(tenant)) for tenant in tenants]


class TenantScopedMixin(ForgedSelectionMixin):
    """Draw every page of a ModelAdmin along the viewer's tenant lines.

    ``tenant_lookup`` is the path from the model to its tenant. Actions call
    :meth:`refuse_foreign_rows` before touching anything.
    """

    tenant_lookup = "tenant"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        ids = tenant_ids(request)
        return queryset if ids is None else queryset.filter(**{f"{self.tenant_lookup}__in": ids})

    def get_list_filter(self, request: HttpRequest) -> list[Any]:
        """Tenant filters list only the viewer's tenants; other relations only values of visible rows."""
        filters = []
        for item in super().get_list_filter(request):
            if isinstance(item, str):
                target = get_fields_from_path(self.model, item)[-1]
                if target.is_relation and target.related_model is Tenant:
                    item = (item, TenantListFilter)
                elif target.is_relation:
                    item = (item, admin.RelatedOnlyFieldListFilter)
            filters.append(item)
        return filters

    def formfield_for_foreignkey(
        self, db_field: "ForeignKey[Any, Any]", request: HttpRequest, **kwargs: Any
    ) -> "ModelChoiceField[Any] | None":
        if db_field.related_model is Tenant and tenant_ids(request, OPERATE) is not None:
            kwargs["queryset"] = Tenant.objects.filter(pk__in=tenant_ids(request, OPERATE))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return super().has_view_permission(request, obj) and self._within(request, obj, VIEW)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return super().has_add_permission(request, *args) and self._within(request, None, OPERATE)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return super().has_change_permission(request, obj) and self._within(request, obj, OPERATE)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return super().has_delete_permission(request, obj) and self._within(request, obj, OPERATE)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        if not self.rows_within(request, queryset, OPERATE):
            raise PermissionDenied
        super().delete_queryset(request, queryset)

    def refuse_foreign_rows(
        self, request: HttpRequest, queryset: QuerySet[Any], level: str = OPERATE
    ) -> bool:
        """Tell the viewer and return True unless every selected row is one they may ``level``."""
        if self.rows_within(request, queryset, level):
            return False
        self.message_user(
            request, "Refused: a selected row is outside the tenants you may act in.", messages.ERROR
        )
        return True

    def rows_within(self, request: HttpRequest, queryset: QuerySet[Any], level: str) -> bool:
        """True if every selected row exists, is visible and lies in a tenant the viewer may ``level``.

        The action's queryset holds only visible rows, so a selected id missing
        from it is a foreign (or unknown) row: the whole action is refused.
        """
        ids = tenant_ids(request, level)
        try:
            if ids is not None and queryset.exclude(**{f"{self.tenant_lookup}__in": ids}).exists():
                return False
            if request.POST.get("select_across") == "1":
                return True
            selected = set(request.POST.getlist(ACTION_CHECKBOX_NAME))
            return len(selected) == queryset.count()
        except (ValidationError, ValueError):  # a forged id in the selection
            return False

    def _within(self, request: HttpRequest, obj: Model | None, level: str) -> bool:
        ids = tenant_ids(request, level)
        if ids is None:
            return True
        if obj is None:
            return bool(ids)
        return self.tenant_id_of(obj) in ids

    def tenant_id_of(self, obj: Model) -> Any:
        *path, last = self.tenant_lookup.split("__")
        for step in path:
            obj = getattr(obj, step)
        return obj.pk if last == "pk" else getattr(obj, f"{last}_id")


class TenantScopedAdmin(TenantScopedMixin, admin.ModelAdmin):
    """A ModelAdmin drawn along the viewer's tenant lines."""


class TenantReadOnlyAdmin(TenantScopedMixin, ReadOnlyAdmin):
    """A read-only admin drawn along the viewer's tenant lines."""


class TenantReadOnlyHistoryAdmin(TenantScopedMixin, ReadOnlyHistoryAdmin):
    """A read-only admin with simple-history, drawn along the viewer's tenant lines."""


class SuperuserOnlyMixin(ForgedSelectionMixin):
    """Pages that span tenants (accounts, groups): superusers only; for anyone else no row exists."""

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        return queryset if request.user.is_superuser else queryset.none()

    def has_module_permission(self, request):
        return request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_add_permission(self, request, *args):
        return request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser


admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class AccountAdmin(SuperuserOnlyMixin, UserAdmin):
    """People span tenants (and can be made superusers here), so only superusers manage them."""


@admin.register(Group)
class RoleGroupAdmin(SuperuserOnlyMixin, GroupAdmin):
    """Role groups carry model permissions for every tenant; only superusers manage them."""


@admin.register(Tenant)
class TenantAdmin(TenantScopedMixin, GuardedModelAdmin):  # type: ignore[misc]  # guardian retypes a template name
    """Object permissions (who reviews or audits this tenant) are under "Object permissions".

    Granting them is a superuser's job: changing a tenant (and so its
    object-permission pages) is refused to everyone else.
    """

    tenant_lookup = "pk"
    list_display = ["name", "created_at"]
    search_fields = ["name"]

    def has_add_permission(self, request, *args):
        return request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser


@admin.register(Agent)
class AgentAdmin(TenantScopedAdmin):
    """An agent's tenant is fixed once created; only a superuser links a person to an agent."""

    list_display = ["name", "tenant", "user", "created_at"]
    list_filter = ["tenant"]
    list_select_related = ["tenant", "user"]
    search_fields = ["name"]
    autocomplete_fields = ["tenant"]

    def get_readonly_fields(self, request, obj=None):
        fixed = list(super().get_readonly_fields(request, obj))
        if obj is not None:
            fixed.append("tenant")
        if not request.user.is_superuser:
            fixed.append("user")  # linking makes a person the submitter; it also lists every account
        return fixed


@admin.register(AgentToken)
class AgentTokenAdmin(TenantScopedAdmin):
    """Tokens are issued by ``create_agent_token``; the admin only shows and revokes."""

    tenant_lookup = "agent__tenant"
    list_display = ["hint", "agent", "created_at", "revoked_at"]
    list_filter = ["agent__tenant"]
    list_select_related = ["agent__tenant"]
    readonly_fields = ["agent", "hint", "key_hash", "created_at"]

    def has_add_permission(self, request, *args):
        return False


@admin.register(UserToken)
class UserTokenAdmin(ForgedSelectionMixin, admin.ModelAdmin):
    """Personal tokens are issued by ``create_user_token``; the admin only shows and revokes.

    A personal token belongs to no tenant: anyone but a superuser sees only their own.
    """

    list_display = ["hint", "user", "created_at", "revoked_at"]
    list_select_related = ["user"]
    readonly_fields = ["user", "hint", "key_hash", "created_at"]

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        return queryset if request.user.is_superuser else queryset.filter(user=request.user)

    def has_add_permission(self, request):
        return False


@admin.register(DeniedRequest)
class DeniedRequestAdmin(TenantReadOnlyAdmin):
    """Each row counts one caller's refusals with one status and code in one window.

    Refusals with no tenant (anonymous callers, people) are shown to superusers only.
    """

    list_display = [
        "created_at",
        "last_seen_at",
        "count",
        "status",
        "code",
        "caller",
        "method",
        "path",
        "tenant",
        "agent",
        "user",
        "remote_addr",
    ]
    list_filter = ["status", "tenant", "created_at"]
    list_select_related = ["tenant", "agent", "user"]
    search_fields = ["path", "caller"]
    date_hierarchy = "created_at"


@admin.register(Delegation)
class DelegationAdmin(TenantScopedMixin, ScopedHistoryMixin, SimpleHistoryAdmin):
    """Operators grant who an agent may act for, and revoke it; a grant is never edited.

    Granting is like deciding: it needs ``decide_proposal`` on the agent's
    tenant. History records who granted and who revoked.
    """

    list_display = [
        "agent",
        "subject_kind",
        "subject_id",
        "granted_by",
        "created_at",
        "expires_at",
        "revoked_at",
    ]
    list_filter = ["tenant", "subject_kind"]
    list_select_related = ["agent__tenant", "granted_by"]
    search_fields = ["subject_id", "agent__name"]
    fields = ["agent", "subject_kind", "subject_id", "expires_at", "reason", "granted_by", "revoked_at"]
    actions = ["revoke"]

    def get_readonly_fields(self, request, obj=None):
        return self.fields if obj is not None else ["granted_by", "revoked_at"]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "agent":
            agents = Agent.objects.filter(is_system=False).select_related("tenant")
            ids = tenant_ids(request, OPERATE)
            kwargs["queryset"] = agents if ids is None else agents.filter(tenant_id__in=ids)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        if change:  # every field is read-only once granted; the web role may only set revoked_at
            return
        obj.granted_by = request.user
        super().save_model(request, obj, form, change)

    @admin.action(description="Revoke selected delegations", permissions=["change"])
    def revoke(self, request, queryset):
        if self.refuse_foreign_rows(request, queryset):
            return
        revoked = sum(
            revoke_delegations(agent=grant.agent, subject=grant.subject)
            for grant in queryset.select_related("agent")
        )
        self.message_user(request, f"Revoked {revoked} delegation(s).")
