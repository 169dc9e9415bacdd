"""Admin helpers shared by the apps."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import Model, QuerySet
from django.db.models.options import Options
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.functional import cached_property

# Mixins are checked as what they are mixed into; at run time they stay plain classes.
if TYPE_CHECKING:
    AnyModelAdmin = admin.ModelAdmin[Any]
    ModelAdminMixin = admin.ModelAdmin[Any]
    PaginatorBase = Paginator[Any]

    class HistoryAdmin(admin.ModelAdmin[Any]):
        """simple-history's admin as far as this project calls it (the package ships no types)."""

        def history_view(
            self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
        ) -> HttpResponse: ...
        def history_form_view(
            self,
            request: HttpRequest,
            object_id: str,
            version_id: str,
            extra_context: dict[str, Any] | None = None,
        ) -> HttpResponse: ...
        def get_historical_record_context_helper(
            self, request: HttpRequest, historical_record: Any
        ) -> Any: ...
        def _get_obj_does_not_exist_redirect(
            self, request: HttpRequest, opts: Options[Any], object_id: str
        ) -> HttpResponseRedirect: ...

    HistoryAdminMixin = HistoryAdmin
else:
    from simple_history.admin import SimpleHistoryAdmin as HistoryAdmin

    AnyModelAdmin = admin.ModelAdmin
    ModelAdminMixin = object
    HistoryAdminMixin = object
    PaginatorBase = Paginator


class CappedCountPaginator(PaginatorBase):
    """Count at most ``CAP`` rows, so a changelist of a million rows costs a page, not a count.

    Pages beyond the cap are reached by filtering or searching, as auditors do.
    """

    CAP = 10_000

    @cached_property
    def count(self) -> int:
        rows = cast("QuerySet[Any]", self.object_list)  # a changelist pages a queryset
        # Unordered: the order needs joins (and an index walk) that a count does not.
        return rows.order_by()[: self.CAP].count()


class ForgedSelectionMixin(ModelAdminMixin):
    """Answer an action on a forged row id with a message, not a server error.

    Django builds the action's queryset with ``pk__in=<posted ids>``, which
    raises on an id the primary key cannot hold.
    """

    def response_action(self, request: HttpRequest, queryset: QuerySet[Any]) -> HttpResponse | None:
        try:
            for value in request.POST.getlist(ACTION_CHECKBOX_NAME):
                self.model._meta.pk.to_python(value)
        except ValidationError:
            self.message_user(request, "Refused: a selected id is not a row of this list.", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())
        return super().response_action(request, queryset)


class ReadInFullSearchMixin(ModelAdminMixin):
    """Search content only where the viewer reads it, so a search is never an oracle.

    ``search_fields`` name metadata (shown in every view) and the aliases of
    :meth:`content_search_aliases`, each holding a content column in the rows
    the viewer reads in full and nothing in the others. Searching the words of
    a withheld statement then matches no row rather than the row that holds it
    (a search over every row would tell which one says what the page hides),
    and a search mixing metadata and content words still works term by term.
    """

    def content_search_aliases(self, request: HttpRequest) -> dict[str, Any]:
        return {}

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Any], search_term: str
    ) -> tuple[QuerySet[Any], bool]:
        if search_term:
            queryset = queryset.alias(**self.content_search_aliases(request))
        return super().get_search_results(request, queryset, search_term)


class ReadOnlyMixin(ModelAdminMixin):
    """Never add, change or delete rows through the admin, nor offer bulk actions it does not name.

    The site's own actions (delete selected, and any added later) never reach
    a read-only list: only those the admin lists in ``actions``, each still
    shown only to whoever holds its permission. With none, the list has no
    action menu and no row checkboxes.
    """

    actions: Sequence[Any] = ()

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        named = {getattr(action, "__name__", action) for action in self.actions or ()}
        return {name: found for name, found in super().get_actions(request).items() if name in named}

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class ReadOnlyAdmin(ReadOnlyMixin, AnyModelAdmin):
    """An admin that shows rows but never adds, changes or deletes them."""


class ScopedHistoryMixin(HistoryAdminMixin):
    """simple-history pages that hold the same lines as the rest of the admin, and never revert.

    The history pages find their row through ``get_queryset`` like every other
    page (simple-history would fall back to the history table, bypassing any
    scoping), and a revision page answers GET only: simple-history saves a
    POSTed revision without asking for change permission.
    ``history_withheld_fields`` never appear in the list of changes.
    """

    history_withheld_fields: tuple[str, ...] = ()

    def revert_disabled(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return True

    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        missing = self._refuse_or_missing(request, object_id)
        return missing or super().history_view(request, object_id, extra_context)

    def history_form_view(
        self,
        request: HttpRequest,
        object_id: str,
        version_id: str,
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        if request.method != "GET":
            raise PermissionDenied("History is read-only.")
        missing = self._refuse_or_missing(request, object_id)
        return missing or super().history_form_view(request, object_id, version_id, extra_context)

    def set_history_delta_changes(
        self, request: HttpRequest, historical_records: Sequence[Any], foreign_keys_are_objs: bool = True
    ) -> None:
        previous = None
        for current in historical_records:
            if previous is not None:
                delta = previous.diff_against(
                    current,
                    excluded_fields=self.history_withheld_fields,
                    foreign_keys_are_objs=foreign_keys_are_objs,
                )
                helper = self.get_historical_record_context_helper(request, previous)
                previous.history_delta_changes = helper.context_for_delta_changes(delta)
            previous = current

    def _refuse_or_missing(self, request: HttpRequest, object_id: str) -> HttpResponseRedirect | None:
        """Answer a history page of a row this viewer cannot see exactly as Django answers a missing id."""
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        if self.get_object(request, unquote(object_id)) is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        return None


class ReadOnlyHistoryAdmin(ReadOnlyMixin, ScopedHistoryMixin, HistoryAdmin):
    """Show a row and its simple-history, but never add, change, delete or revert it."""
