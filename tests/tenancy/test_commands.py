"""Operators manage tenants and agent tokens from the command line; raw tokens are never stored."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from tenancy.models import Agent, AgentToken, Tenant

PROPOSALS = "/api/v1/proposals/"


def _run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def _issue(tenant: str, agent: str) -> str:
    return _run("create_agent_token", "--tenant", tenant, "--agent", agent).strip()


def _get_with(token: str):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client.get(PROPOSALS)


# --- create_tenant ------------------------------------------------------------------------------


def test_create_tenant_creates_it_and_reports_its_id(db):
    output = _run("create_tenant", "quant-desk")
    tenant = Tenant.objects.get(name="quant-desk")
    assert str(tenant.id) in output


def test_create_tenant_refuses_a_duplicate_name(db):
    _run("create_tenant", "quant-desk")
    with pytest.raises(CommandError, match="already exists"):
        _run("create_tenant", "quant-desk")
    assert Tenant.objects.filter(name="quant-desk").count() == 1


@pytest.mark.parametrize("name", ["bad name!", "", "a/b", "x" * 65, "naïve"])
def test_create_tenant_refuses_an_invalid_name(db, name):
    with pytest.raises(CommandError, match="Invalid tenant name"):
        _run("create_tenant", name)
    assert not Tenant.objects.exists()


# --- create_agent_token -------------------------------------------------------------------------


def test_create_agent_token_prints_a_token_that_authenticates(db):
    _run("create_tenant", "quant-desk")
    token = _issue("quant-desk", "research-agent")
    assert token.startswith(AgentToken.PREFIX)
    assert "\n" not in token
    response = _get_with(token)
    assert response.status_code == 200
    assert Agent.objects.get(name="research-agent").tenant.name == "quant-desk"


def test_create_agent_token_writes_only_the_token_to_stdout(db):
    _run("create_tenant", "quant-desk")
    out, err = StringIO(), StringIO()
    call_command("create_agent_token", "--tenant", "quant-desk", "--agent", "bot", stdout=out, stderr=err)
    token = out.getvalue().strip()
    assert out.getvalue() == f"{token}\n"
    assert token not in err.getvalue()
    assert "shown once" in err.getvalue()


def test_create_agent_token_refuses_an_unknown_tenant(db):
    with pytest.raises(CommandError, match="nowhere"):
        _issue("nowhere", "research-agent")
    assert not Agent.objects.exists()
    assert not AgentToken.objects.exists()


def test_a_second_token_for_the_same_agent_is_distinct_and_both_work(db):
    _run("create_tenant", "quant-desk")
    first = _issue("quant-desk", "research-agent")
    second = _issue("quant-desk", "research-agent")
    assert first != second
    assert Agent.objects.count() == 1
    assert _get_with(first).status_code == 200
    assert _get_with(second).status_code == 200


def test_only_the_sha256_of_the_token_is_stored(db):
    _run("create_tenant", "quant-desk")
    raw = _issue("quant-desk", "research-agent")
    stored = AgentToken.objects.get()
    assert stored.key_hash == AgentToken.hash_key(raw)
    assert stored.key_hash != raw
    assert len(stored.key_hash) == 64
    row = AgentToken.objects.values().get()
    assert all(raw not in str(value) for value in row.values())
    assert stored.hint == raw[:12]


# --- revoke_agent_token -------------------------------------------------------------------------


def test_revoked_token_is_refused(db):
    _run("create_tenant", "quant-desk")
    token = _issue("quant-desk", "research-agent")
    output = _run("revoke_agent_token", "--tenant", "quant-desk", "--agent", "research-agent")
    assert "Revoked 1 token(s)" in output
    response = _get_with(token)
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "not_authenticated"
    assert AgentToken.objects.get().revoked_at is not None


def test_revoking_by_hint_leaves_the_agents_other_tokens_working(db):
    _run("create_tenant", "quant-desk")
    kept = _issue("quant-desk", "research-agent")
    revoked = _issue("quant-desk", "research-agent")
    _run("revoke_agent_token", "--tenant", "quant-desk", "--agent", "research-agent", "--hint", revoked[:12])
    assert _get_with(revoked).status_code == 401
    assert _get_with(kept).status_code == 200


def test_revoking_when_no_token_is_active_fails(db):
    _run("create_tenant", "quant-desk")
    _issue("quant-desk", "research-agent")
    _run("revoke_agent_token", "--tenant", "quant-desk", "--agent", "research-agent")
    with pytest.raises(CommandError, match="No active token"):
        _run("revoke_agent_token", "--tenant", "quant-desk", "--agent", "research-agent")


def test_revoking_for_an_unknown_agent_fails(db):
    _run("create_tenant", "quant-desk")
    with pytest.raises(CommandError, match="No active token"):
        _run("revoke_agent_token", "--tenant", "quant-desk", "--agent", "ghost")


def test_revoking_in_an_unknown_tenant_fails(db):
    with pytest.raises(CommandError, match="nowhere"):
        _run("revoke_agent_token", "--tenant", "nowhere", "--agent", "research-agent")


def test_revoking_does_not_touch_a_same_named_agent_in_another_tenant(db):
    _run("create_tenant", "quant-desk")
    _run("create_tenant", "other-desk")
    ours = _issue("quant-desk", "research-agent")
    theirs = _issue("other-desk", "research-agent")
    _run("revoke_agent_token", "--tenant", "quant-desk", "--agent", "research-agent")
    assert _get_with(ours).status_code == 401
    assert _get_with(theirs).status_code == 200
