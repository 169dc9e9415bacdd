"""Token expiry, per-token throttling, login throttling, security headers and the deploy check."""

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from tenancy.models import AgentToken
from tenancy.services import issue_agent_token

ROOT = Path(__file__).resolve().parents[2]


def _client(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def test_tokens_expire(agent):
    token, raw = issue_agent_token(tenant=agent.tenant, agent_name="short-lived", expires_in_days=1)
    assert _client(raw).get("/api/v1/proposals/").status_code == 200
    AgentToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = _client(raw).get("/api/v1/proposals/")
    assert (response.status_code, response.json()["code"]) == (401, "not_authenticated")


def test_tokens_get_the_default_lifetime(agent, settings):
    settings.CUSTODIAN_TOKEN_TTL_DAYS = 30
    token, _ = issue_agent_token(tenant=agent.tenant, agent_name="default-life")
    assert timedelta(days=29) < token.expires_at - timezone.now() <= timedelta(days=30)


def test_each_token_is_throttled_on_its_own(agent, settings):
    settings.CUSTODIAN_API_RATE = "3/min"
    other = _client(issue_agent_token(tenant=agent.tenant, agent_name="other")[1])
    codes = [agent.client.get("/api/v1/proposals/").status_code for _ in range(4)]
    throttled = agent.client.get("/api/v1/proposals/")
    assert codes == [200, 200, 200, 429]
    assert throttled["Content-Type"] == "application/problem+json" and throttled.json()["code"] == "throttled"
    assert "Retry-After" in throttled
    assert other.get("/api/v1/proposals/").status_code == 200


def test_login_is_locked_after_repeated_failures(client, db, settings):
    settings.CUSTODIAN_LOGIN_ATTEMPTS = 3
    User.objects.create_user("carol", password="right-password")
    for _ in range(3):
        assert client.post("/accounts/login/", {"username": "carol", "password": "wrong"}).status_code == 200
    locked = client.post("/accounts/login/", {"username": "carol", "password": "right-password"})
    assert locked.status_code == 429 and "Too many failed sign-ins" in locked.content.decode()


def test_a_successful_login_clears_the_failures(client, db, settings):
    settings.CUSTODIAN_LOGIN_ATTEMPTS = 3
    User.objects.create_user("dave", password="right-password")
    client.post("/accounts/login/", {"username": "dave", "password": "wrong"})
    response = client.post("/accounts/login/", {"username": "dave", "password": "right-password"})
    assert response.status_code == 302


STRICT_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'self'"
)
SWAGGER_UI_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; frame-ancestors 'none'"
)


def _directives(policy: str) -> dict[str, str]:
    """Parse a policy; django-csp writes directives in no fixed order, which CSP does not depend on."""
    return dict(part.strip().partition(" ")[::2] for part in policy.split(";"))


@pytest.mark.parametrize("path", ["/accounts/login/", "/api/v1/proposals/", "/api/schema/", "/nowhere/"])
def test_pages_carry_a_strict_content_security_policy(client, db, path):
    response = client.get(path)
    assert _directives(response["Content-Security-Policy"]) == _directives(STRICT_POLICY)
    assert response["X-Frame-Options"] == "DENY"


def test_swagger_ui_may_run_its_inline_boot_script_and_nothing_from_elsewhere(client, db):
    policy = client.get("/api/docs/")["Content-Security-Policy"]
    assert _directives(policy) == _directives(SWAGGER_UI_POLICY)


def test_production_settings_pass_the_deploy_check():
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings_production",
        "DJANGO_SECRET_KEY": "x7" * 20 + "Qp9-Lm3#Vb8!Zr2@Nc4$Tw6%",
        "DJANGO_ALLOWED_HOSTS": "custodian.example",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", ["/api/v1/proposals/"])
def test_revoked_tokens_are_refused(agent, path):
    from tenancy.services import revoke_agent_tokens

    revoke_agent_tokens(tenant=agent.tenant, agent_name=agent.agent.name)
    assert agent.client.get(path).status_code == 401
