"""The email preference page: each signed-in person sets their own choice, and unsent mail follows it."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from notifications.models import EmailDelivery, EmailPreference
from tests.factories import make_person

pytestmark = pytest.mark.django_db

PAGE = "/review/email/"


def _unsent(person, tenant, *, digest=False) -> EmailDelivery:
    return EmailDelivery.objects.create(
        tenant=tenant,
        user=person,
        event_type="proposal.pending_review",
        payload={"data": {}},
        digest=digest,
        next_attempt_at=timezone.now() + (timedelta(hours=5) if digest else timedelta()),
    )


def test_a_signed_out_visitor_is_sent_to_sign_in(client):
    response = client.get(PAGE)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert client.post(PAGE, {"mode": "off"}).status_code == 302
    assert not EmailPreference.objects.exists()


def test_the_page_shows_the_address_the_workspaces_and_the_current_choice(client, agent):
    person = make_person("pm-alice", agent.tenant)
    person.email = "alice@desk.example"
    person.save(update_fields=["email"])
    EmailPreference.objects.create(user=person, mode="digest")
    client.force_login(person)
    page = client.get(PAGE).content.decode()
    assert "alice@desk.example" in page
    assert agent.tenant.name in page
    assert re.search(r'<input[^>]*value="digest"[^>]*checked', page)
    assert not re.search(r'<input[^>]*value="immediate"[^>]*checked', page)


def test_a_person_without_an_address_is_told_nothing_can_be_sent(client, agent):
    client.force_login(make_person("pm-noaddr", agent.tenant))
    assert "has no email address" in client.get(PAGE).content.decode()


def test_saving_changes_only_the_signed_in_persons_choice_whatever_the_form_claims(client, agent):
    alice, bob = make_person("pm-alice", agent.tenant), make_person("pm-bob", agent.tenant)
    client.force_login(alice)
    response = client.post(PAGE, {"mode": "off", "user": bob.pk, "user_id": bob.pk})
    assert response.status_code == 302 and response["Location"] == PAGE
    assert EmailPreference.objects.get(user=alice).mode == "off"
    assert not EmailPreference.objects.filter(user=bob).exists()
    assert "you get no email about reviews" in client.get(PAGE).content.decode()


def test_an_unknown_choice_is_refused_and_nothing_changes(client, agent):
    person = make_person("pm-alice", agent.tenant)
    EmailPreference.objects.create(user=person, mode="digest")
    client.force_login(person)
    response = client.post(PAGE, {"mode": "hourly"})
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    assert EmailPreference.objects.get(user=person).mode == "digest"


def test_turning_email_off_drops_only_that_persons_unsent_messages(client, agent):
    alice, bob = make_person("pm-alice", agent.tenant), make_person("pm-bob", agent.tenant)
    _unsent(alice, agent.tenant)
    _unsent(alice, agent.tenant, digest=True)
    sent = _unsent(alice, agent.tenant)
    EmailDelivery.objects.filter(pk=sent.pk).update(status=EmailDelivery.Status.DELIVERED)
    kept = _unsent(bob, agent.tenant)
    client.force_login(alice)
    client.post(PAGE, {"mode": "off"})
    assert set(EmailDelivery.objects.values_list("pk", flat=True)) == {sent.pk, kept.pk}


def test_switching_to_the_digest_holds_unsent_messages_and_back_sends_them_now(client, agent):
    person = make_person("pm-alice", agent.tenant)
    message = _unsent(person, agent.tenant)
    client.force_login(person)
    client.post(PAGE, {"mode": "digest"})
    message.refresh_from_db()
    assert message.digest and message.next_attempt_at > timezone.now()
    client.post(PAGE, {"mode": "immediate"})
    message.refresh_from_db()
    assert not message.digest and message.next_attempt_at <= timezone.now()
