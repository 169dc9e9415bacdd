"""``manage.py mcp`` refuses to start in ways that would hand its agent to anyone."""

import pytest
from django.core.management import CommandError, call_command

from mcp_bridge.management.commands import mcp as mcp_command

TOKEN = "t" * 32


def test_it_will_not_start_without_a_token(monkeypatch):
    monkeypatch.delenv("CUSTODIAN_TOKEN", raising=False)
    with pytest.raises(CommandError, match="CUSTODIAN_TOKEN"):
        call_command("mcp")


def test_its_http_endpoint_is_loopback_only_unless_allowed(monkeypatch):
    monkeypatch.setenv("CUSTODIAN_TOKEN", "cst_anything")
    with pytest.raises(CommandError, match="no login of its own"):
        call_command("mcp", "--http", "--host", "0.0.0.0")


def test_a_required_bearer_token_lets_it_bind_beyond_loopback(monkeypatch):
    monkeypatch.setenv("CUSTODIAN_TOKEN", "cst_anything")
    monkeypatch.setenv("CUSTODIAN_MCP_HTTP_TOKEN", TOKEN)
    served = []
    monkeypatch.setattr(mcp_command, "serve_http", lambda server, *where: served.append(where))
    call_command("mcp", "--http", "--host", "0.0.0.0", "--port", "9999")
    assert served == [("0.0.0.0", 9999, TOKEN)]


def test_a_short_bearer_token_is_refused(monkeypatch):
    monkeypatch.setenv("CUSTODIAN_TOKEN", "cst_anything")
    monkeypatch.setenv("CUSTODIAN_MCP_HTTP_TOKEN", "short")
    with pytest.raises(CommandError, match="at least 32"):
        call_command("mcp", "--http")
