"""Endpoints: server-made secrets, http(s) only, and admin pages drawn along tenant lines."""

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.test import Client
from guardian.shortcuts import assign_perm

from notifications.models import WebhookDelivery, WebhookEndpoint
from notifications.services import replay_deliveries
from tests.factories import make_agent, make_person
from tests.notifications.conftest import endpoint

pytestmark = pytest.mark.django_db


def test_the_secret_is_made_on_the_server_in_the_standard_webhooks_form(agent):
    hook = endpoint(agent.tenant, "https://example.org/hook", "receipt.written")
    assert hook.secret.startswith("whsec_") and len(hook.secret) > 40
    assert hook.secret != endpoint(agent.tenant, "https://example.org/other", "receipt.written").secret


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "gopher://x/", "ftp://example.org/", "javascript:x", "example"]
)
def test_only_http_urls_are_accepted(agent, url):
    with pytest.raises(ValidationError) as refused:
        endpoint(agent.tenant, url, "receipt.written")
    assert "url" in refused.value.message_dict


def test_unknown_or_missing_event_types_are_refused(agent):
    for types in ([], ["proposal.approved"]):
        with pytest.raises(ValidationError):
            endpoint(agent.tenant, "https://example.org/hook", *types)


def _staff(name, tenant, perm, *codenames):
    person = make_person(name, tenant, perm=perm)
    person.is_staff = True
    person.save(update_fields=["is_staff"])
    person.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(person)
    return client


ENDPOINT_PERMS = ("view_webhookendpoint", "change_webhookendpoint", "add_webhookendpoint")


def test_an_operator_of_one_tenant_never_sees_another_tenants_endpoint_or_secret(agent):
    other = make_agent("other-desk", "other-agent")
    theirs = endpoint(other.tenant, "https://other.example/hook", "receipt.written")
    mine = endpoint(agent.tenant, "https://mine.example/hook", "receipt.written")
    client = _staff("op-a", agent.tenant, "tenancy.decide_proposal", *ENDPOINT_PERMS)
    listing = client.get("/admin/notifications/webhookendpoint/").content.decode()
    assert "mine.example" in listing and "other.example" not in listing
    page = client.get(f"/admin/notifications/webhookendpoint/{theirs.pk}/change/", follow=True)
    assert theirs.secret not in page.content.decode()
    assert (
        mine.secret in client.get(f"/admin/notifications/webhookendpoint/{mine.pk}/change/").content.decode()
    )


def test_a_viewer_who_may_not_operate_sees_no_secret(agent):
    hook = endpoint(agent.tenant, "https://mine.example/hook", "receipt.written")
    client = _staff("aud-a", agent.tenant, "tenancy.audit_tenant", *ENDPOINT_PERMS)
    page = client.get(f"/admin/notifications/webhookendpoint/{hook.pk}/change/")
    assert page.status_code == 200
    assert hook.secret not in page.content.decode()


def test_the_admin_refuses_a_file_url(agent):
    client = _staff("op-b", agent.tenant, "tenancy.decide_proposal", *ENDPOINT_PERMS)
    form = {"tenant": agent.tenant.pk, "url": "file:///etc/passwd", "event_types": ["receipt.written"]}
    form |= {"format": "standard", "active": "on"}
    response = client.post("/admin/notifications/webhookendpoint/add/", form)
    assert response.status_code == 200 and not WebhookEndpoint.objects.exists()
    form["url"] = "https://ok.example/hook"
    assert client.post("/admin/notifications/webhookendpoint/add/", form).status_code == 302
    assert WebhookEndpoint.objects.get().secret.startswith("whsec_")


def test_replay_gives_a_dead_delivery_fresh_attempts_under_the_same_id(agent):
    hook = endpoint(agent.tenant, "https://mine.example/hook", "receipt.written")
    from django.utils import timezone

    dead = WebhookDelivery.objects.create(
        tenant=agent.tenant,
        endpoint=hook,
        event_type="receipt.written",
        payload={},
        occurred_at=timezone.now(),
        next_attempt_at=timezone.now(),
        status="dead",
        attempts=8,
    )
    delivered = WebhookDelivery.objects.create(
        tenant=agent.tenant,
        endpoint=hook,
        event_type="receipt.written",
        payload={},
        occurred_at=timezone.now(),
        next_attempt_at=timezone.now(),
        status="delivered",
        attempts=1,
    )
    assert replay_deliveries(delivery_ids=[dead.pk, delivered.pk]) == 1
    dead.refresh_from_db()
    delivered.refresh_from_db()
    assert (dead.status, dead.attempts) == ("pending", 0)
    assert delivered.status == "delivered"


def test_replay_in_the_admin_is_for_operators_of_the_rows_tenant(agent):
    from django.utils import timezone

    other = make_agent("other-desk", "other-agent")
    hook = endpoint(other.tenant, "https://other.example/hook", "receipt.written")
    dead = WebhookDelivery.objects.create(
        tenant=other.tenant,
        endpoint=hook,
        event_type="receipt.written",
        payload={},
        occurred_at=timezone.now(),
        next_attempt_at=timezone.now(),
        status="dead",
        attempts=8,
    )
    client = _staff(
        "op-c", agent.tenant, "tenancy.decide_proposal", "view_webhookdelivery", "change_webhookdelivery"
    )
    assign_perm("tenancy.audit_tenant", make_person("x", None), other.tenant)
    client.post(
        "/admin/notifications/webhookdelivery/", {"action": "replay", "_selected_action": [str(dead.pk)]}
    )
    dead.refresh_from_db()
    assert dead.status == "dead"


def test_an_operator_replays_a_dead_delivery_of_their_tenant_in_the_admin(agent):
    from django.utils import timezone

    hook = endpoint(agent.tenant, "https://mine.example/hook", "receipt.written")
    dead = WebhookDelivery.objects.create(
        tenant=agent.tenant,
        endpoint=hook,
        event_type="receipt.written",
        payload={},
        occurred_at=timezone.now(),
        next_attempt_at=timezone.now(),
        status="dead",
        attempts=8,
    )
    client = _staff(
        "op-d", agent.tenant, "tenancy.decide_proposal", "view_webhookdelivery", "change_webhookdelivery"
    )
    assert client.get(f"/admin/notifications/webhookdelivery/{dead.pk}/change/").status_code == 200
    client.post(
        "/admin/notifications/webhookdelivery/", {"action": "replay", "_selected_action": [str(dead.pk)]}
    )
    dead.refresh_from_db()
    assert (dead.status, dead.attempts) == ("pending", 0)
