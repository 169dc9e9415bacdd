"""Read-only lists offer no bulk actions: no action menu, no row checkboxes."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from core.admin import ReadOnlyMixin
from executor.models import ReceiptChain
from reviews.selectors import AUDIT
from tenancy.models import Tenant
from tests.admin.conftest import staff

# Actions an auditor may take with view permission alone: asking for a chain verification.
VIEWERS_ACTIONS = {ReceiptChain: {"verify"}}


def _changelist(model) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def _offers_actions(client, model) -> bool | None:
    """True if the list shows the action menu or row checkboxes; None if the page is not the viewer's."""
    response = client.get(_changelist(model))
    if response.status_code != 200:
        return None
    html = response.content.decode()
    return 'name="action"' in html or "action-checkbox" in html


@pytest.fixture
def viewer(tenant_a):
    """Audits tenant A holding every view permission of the project, and nothing more."""
    user = staff("a-viewer", tenant_a.tenant, AUDIT)
    user.user_permissions.set(Permission.objects.filter(codename__startswith="view_"))
    return user


def test_a_person_with_view_permissions_only_gets_no_bulk_actions(viewer):
    client = Client()
    client.force_login(viewer)
    offered = {}
    for model in admin.site._registry:
        shown = _offers_actions(client, model)
        if shown is not None:
            offered[model] = shown
    assert len(offered) > 10  # the viewer's pages were reached
    assert {model for model, shown in offered.items() if shown} == set(VIEWERS_ACTIONS)


def test_an_auditor_sees_only_the_actions_of_their_permissions(auditor_a):
    client = Client()
    client.force_login(auditor_a)
    request = client.get(_changelist(ReceiptChain)).wsgi_request
    for model, model_admin in admin.site._registry.items():
        if model_admin.has_view_permission(request):
            assert set(model_admin.get_actions(request)) <= VIEWERS_ACTIONS.get(model, set()), model


def test_read_only_lists_offer_superusers_only_the_actions_they_name(admin_client, tenant_a):
    read_only = [m for m, a in admin.site._registry.items() if isinstance(a, ReadOnlyMixin) and not a.actions]
    assert len(read_only) > 5
    for model in read_only:
        assert _offers_actions(admin_client, model) is False, model


def test_a_site_wide_action_never_reaches_a_read_only_list(admin_client, tenant_a):
    def touch(model_admin, request, queryset):  # an action any list of the site would offer
        queryset.update()

    admin.site.add_action(touch, "touch")
    try:
        for model, model_admin in admin.site._registry.items():
            if isinstance(model_admin, ReadOnlyMixin):
                request = admin_client.get(_changelist(model)).wsgi_request
                assert "touch" not in model_admin.get_actions(request), model
        assert _offers_actions(admin_client, Tenant) is True  # an editable list still offers it
    finally:
        admin.site.disable_action("touch")
        admin.site._actions.pop("touch", None)
        admin.site._global_actions.pop("touch", None)
