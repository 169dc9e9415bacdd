"""Reviewers hear by email, through a real worker and a real local SMTP server (aiosmtpd)."""

import email
import socket
from datetime import timedelta

import pytest
from aiosmtpd.controller import Controller
from django.utils import timezone

from notifications.models import EmailDelivery, EmailPreference
from tests.factories import create_payload, factor_fact, make_evidence, make_person, submit
from tests.workers import celery_worker, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


class Inbox:
    def __init__(self) -> None:
        self.messages: list[email.message.Message] = []

    async def handle_DATA(self, server, session, envelope) -> str:
        message = email.message_from_bytes(envelope.content)
        message["X-Rcpt"] = ",".join(envelope.rcpt_tos)
        self.messages.append(message)
        return "250 OK"

    def to(self, address: str) -> list[email.message.Message]:
        return [m for m in self.messages if address in m["X-Rcpt"]]


@pytest.fixture
def inbox(quick_retries):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    handler = Inbox()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    quick_retries.setenv("EMAIL_HOST", "127.0.0.1")
    quick_retries.setenv("EMAIL_PORT", str(port))
    quick_retries.setenv("CUSTODIAN_PUBLIC_URL", "https://custodian.example")
    yield handler
    controller.stop()


def _reviewer(name, tenant, mode=None):
    person = make_person(name, tenant)
    person.email = f"{name}@desk.example"
    person.save(update_fields=["email"])
    if mode:
        EmailPreference.objects.create(user=person, mode=mode)
    return person


def _pending(agent, marker, n=0):
    memory = factor_fact(content={**factor_fact()["content"], "statement": f"statement-{marker}-{n}"})
    proposal = submit(
        agent.agent, create_payload({**memory, "dedupe_key": f"f:{marker}:{n}"}, [make_evidence(agent.agent)])
    )
    assert proposal.status == "pending_review"
    return proposal


def test_a_reviewer_is_mailed_a_link_and_the_proposals_kind_never_its_content(agent, inbox, marker, tmp_path):
    _reviewer("eager", agent.tenant)
    _reviewer("quiet", agent.tenant, mode="off")
    make_person("auditor", agent.tenant, perm="tenancy.audit_tenant")
    with celery_worker(tmp_path, beat=True, queues=("notifications",)):
        proposal = _pending(agent, marker)
        wait_until(lambda: len(inbox.messages) == 1, what="one message")
    message = inbox.to("eager@desk.example")[0]
    text = message.get_payload(decode=True).decode()
    assert f"https://custodian.example/review/proposals/{proposal.pk}/" in text
    assert "Change how you are notified: https://custodian.example/review/email/" in text
    assert proposal.matched_rule in text and "create of semantic_fact" in text
    assert agent.agent.name in text
    assert marker not in text and marker not in message["Subject"]
    assert not inbox.to("quiet@desk.example")
    assert EmailDelivery.objects.get().status == "delivered"


def test_a_digest_reader_gets_one_message_for_the_day(agent, inbox, marker, tmp_path):
    _reviewer("daily", agent.tenant, mode="digest")
    with celery_worker(tmp_path, beat=True, queues=("notifications",)):
        first, second = _pending(agent, marker, 1), _pending(agent, marker, 2)
        rows = EmailDelivery.objects.filter(digest=True)
        assert rows.count() == 2 and all(r.next_attempt_at > timezone.now() for r in rows)
        assert not inbox.messages
        rows.update(next_attempt_at=timezone.now() - timedelta(seconds=1))  # the digest hour came
        wait_until(lambda: inbox.messages, what="the digest")
        wait_until(lambda: not EmailDelivery.objects.exclude(status="delivered").exists(), what="all sent")
    assert len(inbox.messages) == 1
    text = inbox.messages[0].get_payload(decode=True).decode()
    assert str(first.pk) in text and str(second.pk) in text and marker not in text
