"""``manage.py mcp`` refuses to start in ways that would hand its agent to anyone."""

import pytest
from django.core.management import CommandError, call_command


def test_it_will_not_start_without_a_token(monkeypatch):
    monkeypatch.delenv("CUSTODIAN_TOKEN", raising=False)
    with pytest.raises(CommandError, match="CUSTODIAN_TOKEN"):
        call_command("mcp")


def test_its_http_endpoint_is_loopback_only_unless_allowed(monkeypatch):
    monkeypatch.setenv("CUSTODIAN_TOKEN", "cst_anything")
    with pytest.raises(CommandError, match="no login of its own"):
        call_command("mcp", "--http", "--host", "0.0.0.0")
