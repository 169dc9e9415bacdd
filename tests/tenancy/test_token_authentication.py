"""An agent token is read with one hand-built statement: it must refuse every token the ORM refused
and hand the view the same agent and tenant, over HTTP as an agent calls it."""

import hashlib
import secrets
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from tenancy.models import Agent, AgentToken
from tenancy.selectors import active_agent_token
from tenancy.services import issue_agent_token, system_agent

PATH = "/api/v1/proposals/"


def _client(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def test_a_live_token_gives_its_agent_and_tenant_as_the_orm_reads_them(agent):
    token, raw = issue_agent_token(tenant=agent.tenant, agent_name="reader")
    with CaptureQueriesContext(connection) as queries:
        found = active_agent_token(AgentToken.hash_key(raw))
    assert len(queries.captured_queries) == 1
    expected = AgentToken.objects.select_related("agent__tenant").get(pk=token.pk)
    for loaded, stored in [
        (found, expected),
        (found.agent, expected.agent),
        (found.agent.tenant, expected.agent.tenant),
    ]:
        fields = type(stored)._meta.concrete_fields
        assert {f.attname: getattr(loaded, f.attname) for f in fields} == {
            f.attname: getattr(stored, f.attname) for f in fields
        }
        assert not loaded._state.adding
    with CaptureQueriesContext(connection) as queries:
        assert found.agent.tenant.name == agent.tenant.name
    assert queries.captured_queries == []
    assert _client(raw).get(PATH).status_code == 200


def test_a_token_expiring_later_is_accepted_and_one_expired_is_refused(agent):
    token, raw = issue_agent_token(tenant=agent.tenant, agent_name="short-lived", expires_in_days=1)
    assert _client(raw).get(PATH).status_code == 200
    AgentToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert _client(raw).get(PATH).status_code == 401


def test_a_revoked_token_is_refused_on_the_next_request(agent):
    token, raw = issue_agent_token(tenant=agent.tenant, agent_name="revoked")
    assert _client(raw).get(PATH).status_code == 200
    AgentToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
    assert _client(raw).get(PATH).status_code == 401


def test_a_token_of_a_system_agent_is_refused(agent):
    """Even one written straight into the table: Custodian's own identity takes no requests."""
    system = system_agent(tenant_id=agent.tenant.id)
    raw = AgentToken.PREFIX + secrets.token_urlsafe(32)
    AgentToken.objects.create(agent=system, key_hash=AgentToken.hash_key(raw), hint=raw[:12])
    assert _client(raw).get(PATH).status_code == 401
    Agent.objects.filter(pk=system.pk).update(is_system=False)
    assert _client(raw).get(PATH).status_code == 200


@pytest.mark.parametrize("raw", ["", "x", "cst_" + "a" * 43, hashlib.sha256(b"x").hexdigest()])
def test_unknown_tokens_are_refused(agent, raw):
    if raw == "":
        assert _client(raw).get(PATH).status_code == 401
        return
    assert active_agent_token(AgentToken.hash_key(raw)) is None
    assert _client(raw).get(PATH).status_code == 401


def test_the_stored_hash_itself_is_not_a_token(agent):
    """Someone who read the token table learns hashes; presenting a hash must not authenticate."""
    token, _ = issue_agent_token(tenant=agent.tenant, agent_name="hashed")
    assert _client(token.key_hash).get(PATH).status_code == 401
