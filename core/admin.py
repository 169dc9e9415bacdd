"""Admin helpers shared by the apps."""

from django.contrib import admin
from django.core.paginator import Paginator
from django.utils.functional import cached_property
from simple_history.admin import SimpleHistoryAdmin


class CappedCountPaginator(Paginator):
    """Count at most ``CAP`` rows, so a changelist of a million rows costs a page, not a count.

    Pages beyond the cap are reached by filtering or searching, as auditors do.
    """

    CAP = 10_000

    @cached_property
    def count(self) -> int:
        return self.object_list[: self.CAP].count()


class ReadOnlyMixin:
    """Never add, change or delete rows through the admin."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """An admin that shows rows but never adds, changes or deletes them."""


class ReadOnlyHistoryAdmin(ReadOnlyMixin, SimpleHistoryAdmin):
    """Show a row and its simple-history, but never add, change, delete or revert it."""

    def revert_disabled(self, request, obj=None):
        return True
