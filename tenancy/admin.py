from django.contrib import admin
from guardian.admin import GuardedModelAdmin

from core.admin import ReadOnlyAdmin
from tenancy.models import Agent, AgentToken, DeniedRequest, Tenant, UserToken


@admin.register(Tenant)
class TenantAdmin(GuardedModelAdmin):
    """Object permissions (who reviews or audits this tenant) are under "Object permissions"."""

    list_display = ["name", "created_at"]
    search_fields = ["name"]


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["name", "tenant", "user", "created_at"]
    list_filter = ["tenant"]
    list_select_related = ["tenant", "user"]
    search_fields = ["name"]


@admin.register(AgentToken)
class AgentTokenAdmin(admin.ModelAdmin):
    """Tokens are issued by ``create_agent_token``; the admin only shows and revokes."""

    list_display = ["hint", "agent", "created_at", "revoked_at"]
    list_filter = ["agent__tenant"]
    list_select_related = ["agent__tenant"]
    readonly_fields = ["agent", "hint", "key_hash", "created_at"]

    def has_add_permission(self, request):
        return False


@admin.register(UserToken)
class UserTokenAdmin(admin.ModelAdmin):
    """Personal tokens are issued by ``create_user_token``; the admin only shows and revokes."""

    list_display = ["hint", "user", "created_at", "revoked_at"]
    list_select_related = ["user"]
    readonly_fields = ["user", "hint", "key_hash", "created_at"]

    def has_add_permission(self, request):
        return False


@admin.register(DeniedRequest)
class DeniedRequestAdmin(ReadOnlyAdmin):
    """Each row counts one caller's refusals with one status and code in one window."""

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
