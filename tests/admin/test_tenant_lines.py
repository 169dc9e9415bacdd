"""Staff of tenant A see nothing of tenant B anywhere in the admin: lists, pages, filters, search, lookups.

The pages are walked from ``admin.site._registry``, so an admin added later is
covered without touching this file (its model needs a row in ``build_tenant_world``).
"""

import json
import uuid

import pytest
from django.contrib import admin
from django.urls import reverse
from guardian.shortcuts import assign_perm
from simple_history.admin import SimpleHistoryAdmin

from executor.models import Receipt
from memory_core.models import Memory
from reviews.selectors import AUDIT
from tests.factories import create_payload, factor_fact, make_agent, make_evidence, submit

VIEWERS = ["operator_a", "auditor_a"]


def _url(model, view: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def _missing_pk(model):
    return uuid.uuid4() if model._meta.pk.get_internal_type() == "UUIDField" else 2**31 - 1


def _answer(response) -> tuple:
    return response.status_code, response.get("Location")


def _visit(client, url) -> tuple:
    """GET a page; drop the "does not exist" message it leaves, which only echoes the id asked for."""
    response = client.get(url)
    client.cookies.pop("messages", None)
    return _answer(response)


def _listed_pks(response) -> set:
    return {row.pk for row in response.context["cl"].result_list}


def _page_leaks(client, model, foreign, world_b) -> list[str]:
    """Return what tenant B's rows show through one model's admin pages."""
    leaks = []
    changelist = client.get(_url(model, "changelist"))
    if changelist.status_code == 200:
        html = changelist.content.decode()
        leaks += [f"{model.__name__} changelist lists {pk}" for pk in _listed_pks(changelist) & foreign]
        leaks += [f"{model.__name__} changelist shows {m!r}" for m in world_b.markers() if m in html]
        for pk in list(foreign)[:3]:
            found = client.get(_url(model, "changelist"), {"q": str(pk)})
            leaks += [f"{model.__name__} search finds {pk}" for _ in _listed_pks(found) & foreign]
        popup = client.get(_url(model, "changelist"), {"_popup": "1"})
        leaks += [f"{model.__name__} lookup popup offers {pk}" for pk in _listed_pks(popup) & foreign]
    elif changelist.status_code != 403:
        leaks.append(f"{model.__name__} changelist answered {changelist.status_code}")
    missing = _missing_pk(model)
    for view in ("change", "history", "delete"):
        expected = _visit(client, _url(model, view, missing))
        for pk in list(foreign)[:3]:
            got = _visit(client, _url(model, view, pk))
            if got != expected:
                leaks.append(f"{model.__name__} {view} of {pk} answers {got}, a missing id {expected}")
    return leaks


def _history_form_leaks(client, model, foreign) -> list[str]:
    history = model.history.model
    leaks = []
    for row in history.objects.filter(**{f"{model._meta.pk.attname}__in": list(foreign)[:3]}):
        url = reverse(
            f"admin:{model._meta.app_label}_{model._meta.model_name}_simple_history",
            args=[row.instance.pk, row.history_id],
        )
        if client.get(url).status_code == 200:
            leaks.append(f"{model.__name__} history revision {row.history_id} is shown")
    return leaks


@pytest.mark.parametrize("viewer", VIEWERS)
def test_no_admin_page_shows_another_tenants_rows(client, request, tenant_b, viewer):
    client.force_login(request.getfixturevalue(viewer))
    leaks = []
    for model, model_admin in admin.site._registry.items():
        foreign = tenant_b.rows[model]
        assert foreign, f"build_tenant_world creates no {model.__name__}: add one so its admin is tested"
        leaks += _page_leaks(client, model, foreign, tenant_b)
        if isinstance(model_admin, SimpleHistoryAdmin):
            leaks += _history_form_leaks(client, model, foreign)
    index = client.get(reverse("admin:index")).content.decode()
    leaks += [f"admin index shows {m!r}" for m in tenant_b.markers() if m in index]
    assert leaks == []


def test_staff_still_see_their_own_tenants_rows(client, operator_a, tenant_a):
    """The lines hold B back without hiding A: every tenant-drawn changelist lists A's rows."""
    from tenancy.admin import TenantScopedMixin

    client.force_login(operator_a)
    empty = []
    for model, model_admin in admin.site._registry.items():
        if isinstance(model_admin, TenantScopedMixin):
            response = client.get(_url(model, "changelist"))
            if not _listed_pks(response) & tenant_a.rows[model]:
                empty.append(model.__name__)
    assert empty == []


def test_a_reviewer_cannot_open_another_tenants_restricted_memory(client, operator_a, tenant_b, remember):
    restricted = remember("zq-restricted-secret", handle=tenant_b.handle, sensitivity="restricted")
    client.force_login(operator_a)
    response = client.get(_url(Memory, "change", restricted.pk))
    assert _answer(response) == _answer(client.get(_url(Memory, "change", uuid.uuid4())))
    assert "zq-restricted-secret" not in client.get(response["Location"]).content.decode()


def test_receipt_list_and_its_tenant_filter_hold_only_the_viewers_tenants(
    client, auditor_a, tenant_a, tenant_b
):
    third = make_agent("third-desk", "third-agent").tenant
    assign_perm(AUDIT, auditor_a, third)
    client.force_login(auditor_a)
    response = client.get(_url(Receipt, "changelist"))
    assert {r.tenant_id for r in response.context["cl"].result_list} == {tenant_a.tenant.pk}
    tenant_filter = next(f for f in response.context["cl"].filter_specs if f.field_path == "tenant")
    assert {str(pk) for pk, _ in tenant_filter.lookup_choices} == {str(tenant_a.tenant.pk), str(third.pk)}
    forced = client.get(_url(Receipt, "changelist"), {"tenant__id__exact": str(tenant_b.tenant.pk)})
    assert _listed_pks(forced) == set()


def test_autocomplete_offers_only_the_viewers_tenants(client, operator_a, tenant_a, tenant_b):
    client.force_login(operator_a)
    offered = []
    for model, model_admin in admin.site._registry.items():
        for field_name in model_admin.get_autocomplete_fields(None):
            response = client.get(
                reverse("admin:autocomplete"),
                {
                    "app_label": model._meta.app_label,
                    "model_name": model._meta.model_name,
                    "field_name": field_name,
                },
            )
            assert response.status_code == 200
            offered += [item["id"] for item in json.loads(response.content)["results"]]
    assert str(tenant_a.tenant.pk) in offered
    assert str(tenant_b.tenant.pk) not in offered


def test_a_foreign_tenant_cannot_be_chosen_in_a_form(client, operator_a, tenant_b):
    client.force_login(operator_a)
    from tenancy.models import Agent

    response = client.post(_url(Agent, "add"), {"tenant": str(tenant_b.tenant.pk), "name": "planted"})
    assert response.status_code == 200  # the form is shown again with an error
    assert not Agent.objects.filter(name="planted").exists()


def test_a_pending_foreign_proposal_is_not_in_any_admin_list(client, operator_a, tenant_b):
    pending = submit(
        tenant_b.handle.agent, create_payload(factor_fact(), [make_evidence(tenant_b.handle.agent)])
    )
    client.force_login(operator_a)
    assert str(pending.pk) not in client.get("/admin/proposals/proposal/").content.decode()


def _queries(client, url) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_tenant_lines_cost_the_same_at_any_size(client, operator_a, tenant_a, applied_memory_factory):
    """The lines add a fixed number of queries per page, never one per row."""
    client.force_login(operator_a)
    urls = [_url(model, "changelist") for model in admin.site._registry if model._meta.app_label != "auth"]
    few = {url: _queries(client, url) for url in urls}
    for _ in range(4):
        applied_memory_factory(tenant_a.handle)
    assert {url: _queries(client, url) for url in urls} == few
